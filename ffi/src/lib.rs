//! C ABI over `ranklet-core`. The scoring entry points arrive with the
//! device-scoring work; for now the crate only exposes the library version.

/// Version of the library as a NUL-terminated C string.
pub static RK_VERSION: &[u8] = concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes();
