//! Exchanging memory with other libraries through standard protocols: DLPack (the `dlpack`
//! feature), in [`dlpack`].

pub mod dlpack;
