//! The attribute's argument (the operation, a string literal) and the item it is put on (a
//! signature without a body).

use syn::parse::{Parse, ParseStream};

/// The attribute's argument: the operation.
pub struct Args {
    pub(super) op: syn::LitStr,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let op: syn::LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "#[elementwise] takes the operation as a string literal, e.g. #[elementwise(\"z = a * x + y\")]",
            )
        })?;
        if !input.is_empty() {
            return Err(input.error("#[elementwise] takes one string literal: the operation"));
        }
        Ok(Args { op })
    }
}

/// The item: a signature without a body.
pub struct Item {
    pub(super) attrs: Vec<syn::Attribute>,
    pub(super) vis: syn::Visibility,
    pub(super) sig: syn::Signature,
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (attrs, vis, sig) = parse_bodiless(
            input,
            "an #[elementwise] fn has no body: the operation in the attribute is its body; end the signature with `;`",
        )?;
        Ok(Item { attrs, vis, sig })
    }
}

/// Reads attributes, visibility and a signature ended by `;`; a body is the error `no_body`.
/// Shared with `#[reduction]`.
pub(crate) fn parse_bodiless(
    input: ParseStream,
    no_body: &str,
) -> syn::Result<(Vec<syn::Attribute>, syn::Visibility, syn::Signature)> {
    let attrs = input.call(syn::Attribute::parse_outer)?;
    let vis = input.parse()?;
    let sig: syn::Signature = input.parse()?;
    if input.peek(syn::token::Brace) {
        return Err(input.error(no_body));
    }
    input.parse::<syn::Token![;]>()?;
    Ok((attrs, vis, sig))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::expand;
    use crate::elementwise::test_support::sig;

    #[test]
    fn attribute_and_signature_errors() {
        let e = |s: &str| syn::parse_str::<Args>(s).err().map(|e| e.to_string());
        assert!(e(r#""z = x""#).is_none());
        assert!(e("z = x")
            .is_some_and(|m| m.starts_with("#[elementwise] takes the operation as a string literal")));
        assert_eq!(
            e(r#""z = x", "y""#).as_deref(),
            Some("#[elementwise] takes one string literal: the operation")
        );
        let Err(body) = syn::parse_str::<Item>("fn f(z: &mut DeviceArray<f32>) {}") else {
            panic!("a body was accepted");
        };
        assert!(body.to_string().starts_with("an #[elementwise] fn has no body"));
        let expand_err = |item: &str| match expand(syn::parse_str(r#""z = 1""#).expect("args"), sig(item)) {
            Ok(_) => panic!("`{item}` expanded"),
            Err(e) => e.to_string(),
        };
        assert!(expand_err("fn f<T>(z: &mut DeviceArray<f32>);")
            .starts_with("an #[elementwise] fn is not generic"));
        assert!(expand_err("fn f(z: &mut DeviceArray<f32>) -> i32;")
            .starts_with("an #[elementwise] fn returns nothing"));
        assert_eq!(
            expand_err("async fn f(z: &mut DeviceArray<f32>);"),
            "an #[elementwise] fn is not `async`"
        );
        assert_eq!(
            expand_err("fn f(z: &mut DeviceArray<f32>, z: f32);"),
            "`z` is taken twice"
        );
    }
}
