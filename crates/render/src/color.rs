use crate::error::{RenderError, Result};

/// "#1D4ED8" or "1D4ED8" -> [r, g, b].
pub fn parse_hex(s: &str) -> Result<[u8; 3]> {
    let h = s.strip_prefix('#').unwrap_or(s);
    if h.len() != 6 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RenderError::InvalidColor(s.to_string()));
    }
    let v = u32::from_str_radix(h, 16).map_err(|_| RenderError::InvalidColor(s.to_string()))?;
    Ok([(v >> 16) as u8, (v >> 8) as u8, v as u8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_and_without_hash() {
        assert_eq!(parse_hex("#1D4ED8").unwrap(), [0x1d, 0x4e, 0xd8]);
        assert_eq!(parse_hex("ffffff").unwrap(), [255, 255, 255]);
        assert!(parse_hex("#12345").is_err());
        assert!(parse_hex("#GGGGGG").is_err());
    }
}
