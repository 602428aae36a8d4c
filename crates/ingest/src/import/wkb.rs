//! Just enough Well-Known Binary to read a Point: both byte orders, ISO Z/M/ZM type codes and
//! PostGIS EWKB flags (Overture writes plain little-endian 2-D points).

pub fn point(b: &[u8]) -> Result<(f64, f64), String> {
    let le = match b.first() {
        Some(1) => true,
        Some(0) => false,
        _ => return Err("WKB: bad byte-order flag".into()),
    };
    let u32_at = |o: usize| -> Option<u32> {
        let a: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
        Some(if le { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) })
    };
    let f64_at = |o: usize| -> Option<f64> {
        let a: [u8; 8] = b.get(o..o + 8)?.try_into().ok()?;
        Some(if le { f64::from_le_bytes(a) } else { f64::from_be_bytes(a) })
    };
    let t = u32_at(1).ok_or("WKB: truncated header")?;
    // ISO codes: Point, Point Z, Point M, Point ZM (EWKB says Z and M in the high bits,
    // masked off here); anything else, 5001 included, is no point.
    let code = t & 0x0fff_ffff;
    if ![1, 1001, 2001, 3001].contains(&code) {
        return Err(format!("WKB: geometry type {code} is not a Point"));
    }
    let off = if t & 0x2000_0000 != 0 { 9 } else { 5 };
    match (f64_at(off), f64_at(off + 8)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err("WKB: truncated point".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le_point(x: f64, y: f64) -> Vec<u8> {
        let mut v = vec![1u8];
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&x.to_le_bytes());
        v.extend_from_slice(&y.to_le_bytes());
        v
    }

    #[test]
    fn reads_points_in_both_byte_orders() {
        assert_eq!(point(&le_point(-87.6, 41.9)), Ok((-87.6, 41.9)));
        let mut be = vec![0u8];
        be.extend_from_slice(&1u32.to_be_bytes());
        be.extend_from_slice(&2.5f64.to_be_bytes());
        be.extend_from_slice(&(-3.0f64).to_be_bytes());
        assert_eq!(point(&be), Ok((2.5, -3.0)));
    }

    #[test]
    fn rejects_other_geometries_and_garbage() {
        let mut line = le_point(0.0, 0.0);
        line[1] = 2;
        assert!(point(&line).unwrap_err().contains("not a Point"));
        // Codes that end in 1 without being a Point's (no ISO type 4001 or 5001 exists).
        for code in [4001u32, 5001, 11] {
            let mut odd = le_point(0.0, 0.0);
            odd[1..5].copy_from_slice(&code.to_le_bytes());
            assert_eq!(point(&odd).unwrap_err(), format!("WKB: geometry type {code} is not a Point"));
        }
        // Point Z by ISO code: x and y come first.
        let mut z = le_point(7.5, 47.25);
        z[1..5].copy_from_slice(&1001u32.to_le_bytes());
        z.extend_from_slice(&400.0f64.to_le_bytes());
        assert_eq!(point(&z), Ok((7.5, 47.25)));
        assert!(point(&[7, 1, 2]).is_err());
        assert!(point(&le_point(1.0, 2.0)[..12]).unwrap_err().contains("truncated"));
        assert!(point(&[]).is_err());
    }
}
