//! Source-over in premultiplied RGBA8: the one blend every layer drawn by hand uses (marker
//! stamps, text and legend glyphs, the heatmap), with one rounding rule, so the same colour at
//! the same coverage is the same pixel whichever layer drew it. tiny-skia's own fills (land,
//! borders, focus shapes) blend inside tiny-skia.

/// x / 255 rounded to nearest, for x up to 255 * 255, without a division.
#[inline]
pub fn div255(x: u32) -> u32 {
    ((x + 128) * 257) >> 16
}

/// A premultiplied source over a premultiplied destination pixel (4 bytes), in place.
#[inline]
pub fn over(src: [u8; 4], dst: &mut [u8]) {
    let inv = 255 - src[3] as u32;
    for c in 0..4 {
        dst[c] = (src[c] as u32 + div255(dst[c] as u32 * inv)).min(255) as u8;
    }
}

/// An opaque colour seen through coverage (or alpha) `a`, as a premultiplied source.
#[inline]
pub fn covered(color: [u8; 3], a: u8) -> [u8; 4] {
    let a32 = a as u32;
    [div255(color[0] as u32 * a32) as u8, div255(color[1] as u32 * a32) as u8, div255(color[2] as u32 * a32) as u8, a]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div255_rounds_like_division() {
        for x in 0..=255 * 255 {
            assert_eq!(div255(x), (x + 127) / 255, "{x}");
        }
    }

    #[test]
    fn full_coverage_replaces_and_none_keeps() {
        let mut px = [10, 20, 30, 255];
        over(covered([200, 100, 50], 255), &mut px);
        assert_eq!(px, [200, 100, 50, 255]);
        over(covered([1, 2, 3], 0), &mut px);
        assert_eq!(px, [200, 100, 50, 255]);
    }

    #[test]
    fn half_coverage_mixes_halfway_over_opaque() {
        // White at 128/255 over black: 128 in every colour channel, still opaque.
        let mut px = [0, 0, 0, 255];
        over(covered([255, 255, 255], 128), &mut px);
        assert_eq!(px, [128, 128, 128, 255]);
    }

    #[test]
    fn over_transparent_keeps_the_source() {
        let mut px = [0, 0, 0, 0];
        let src = covered([255, 0, 0], 64);
        over(src, &mut px);
        assert_eq!(px, src);
    }
}
