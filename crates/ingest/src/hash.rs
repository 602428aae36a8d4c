//! The pipeline's one hash for anything that must come out the same on every build and
//! platform (generated ids, orders, content hashes).

/// FNV-1a: a fixed, dependency-free hash, so orders derived from it never change between
/// builds or platforms.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_parts(&[bytes])
}

/// [`fnv1a`] of the parts one after another, without joining them first.
pub fn fnv1a_parts(parts: &[&[u8]]) -> u64 {
    parts.iter().flat_map(|p| p.iter()).fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}
