//! Vector basemap tiles: PMTiles version 3 archives and the Mapbox Vector Tiles inside them.
//! Reading only; drawing them is the renderer's.

pub mod classify;
pub mod extract;
pub mod mvt;
pub mod pmtiles;
pub mod source;

/// A LEB128 varint (protobuf's and PMTiles directories' unsigned numbers) at `*pos`, which moves
/// past it; None when the bytes end inside it or it runs past 64 bits.
pub(crate) fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}
