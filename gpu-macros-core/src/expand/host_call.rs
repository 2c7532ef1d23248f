//! The bodies of `call` and `call_on`: host data staged through pinned memory around the
//! launch, or the `prepared_*` call when no argument is marked.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use crate::check::direction_of;
use crate::expand::runtime_path::rt;
use crate::input::{RustArg, RustType};

/// The `call` body (`stream` None) or the `call_on` body (`stream` the name of its `&Stream`):
/// stage the marked arguments, upload, launch on the staging stream or the caller's, finish
/// (copies back and waits once, reporting kernel errors). Without marked arguments, the
/// matching `prepared_*` call.
pub(super) fn convenience_body(args: &[RustArg], stream: Option<&Ident>) -> TokenStream {
    let rt = rt();
    if !args
        .iter()
        .any(|a| matches!(a.kind, RustType::Slice { .. }) && direction_of(a).is_some())
    {
        let names = args.iter().map(|a| &a.name);
        return match stream {
            Some(s) => quote!(self.prepared_async_call(grid, block, #s, #(#names),*)),
            None => quote!(self.prepared_call(grid, block, #(#names),*)),
        };
    }
    let staging = match stream {
        Some(s) => quote!(#rt::__private_v0_1::staging_on(&self.function, #s)?),
        None => quote!(#rt::__private_v0_1::Staging::new(&self.function)?),
    };
    let Staged {
        before, call_args, ..
    } = staged_args(args);
    quote! {
        let mut __staging = #staging;
        #(#before)*
        __staging.upload()?;
        __staging.launch(|__stream| self.launch_on(grid.into(), block.into(), __stream, #(#call_args),*))?;
        __staging.finish()
    }
}

/// The statements that stage each marked host array through `__staging` (`input`, `output`
/// or `input_output` by its direction; a `None` of a nullable one stages nothing), the launch
/// arguments in their place (the staged buffers, the other arguments as they are), and the
/// staged buffers' and host arrays' names: what `call` and `call_future` share.
pub(super) struct Staged<'a> {
    pub before: Vec<TokenStream>,
    pub call_args: Vec<TokenStream>,
    pub staged: Vec<Ident>,
    pub hosts: Vec<&'a Ident>,
}

pub(super) fn staged_args(args: &[RustArg]) -> Staged<'_> {
    let rt = rt();
    let (mut before, mut call_args, mut staged_names, mut hosts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for arg in args {
        let name = &arg.name;
        let staged = format_ident!("__d_{}", name);
        match (&arg.kind, direction_of(arg)) {
            (RustType::Slice { mutable, elem }, Some(dir)) => {
                let host = if arg.nullable { quote!(__h) } else { quote!(#name) };
                let make = match (dir.copies_in(), dir.copies_out()) {
                    (true, false) => quote!(__staging.input(&*#host)?),
                    (true, true) => quote!(__staging.input_output(&mut *#host)?),
                    _ => quote!(__staging.output(&mut *#host)?),
                };
                if arg.nullable {
                    // `None` stages nothing and passes the null pointer.
                    before.push(quote! {
                        let mut #staged = match #name {
                            ::core::option::Option::Some(__h) => ::core::option::Option::Some(#make),
                            ::core::option::Option::None => ::core::option::Option::None,
                        };
                    });
                    call_args.push(if *mutable {
                        quote!(#staged.as_mut().map(|__b| __b as &mut dyn #rt::DeviceWrite<#elem>))
                    } else {
                        quote!(#staged.as_ref().map(|__b| __b as &dyn #rt::DeviceRead<#elem>))
                    });
                } else {
                    before.push(quote!(let mut #staged = #make;));
                    call_args.push(if *mutable {
                        quote!(&mut #staged)
                    } else {
                        quote!(&#staged)
                    });
                }
                staged_names.push(staged);
                hosts.push(name);
            }
            _ => call_args.push(quote!(#name)),
        }
    }
    Staged {
        before,
        call_args,
        staged: staged_names,
        hosts,
    }
}
