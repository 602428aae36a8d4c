//! The escaping and number printing every writer shares: JSON strings (escape-free runs
//! found eight bytes at a time), CSV quoting, shortest round-trip coordinates, times and ids.

use super::TimeCache;
use crate::snapshot::NULL_TIME;

pub(super) fn json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    // Almost every value needs no escaping: copy it whole.
    if !needs_json_escape(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of the word is below `n` (n ≤ 128), eight bytes at a time.
fn any_below(x: u64, n: u8) -> bool {
    x.wrapping_sub(LO * n as u64) & !x & HI != 0
}

fn any_equal(x: u64, b: u8) -> bool {
    any_below(x ^ (LO * b as u64), 1)
}

/// A control character, quote or backslash anywhere in `bytes`: checked a word at a time,
/// since this runs for every text field of every row.
fn needs_json_escape(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if any_below(x, 0x20) || any_equal(x, b'"') || any_equal(x, b'\\') {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// A comma, quote, CR or LF anywhere in `bytes`, eight bytes at a time.
pub(super) fn needs_csv_quotes(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if any_equal(x, b',') || any_equal(x, b'"') || any_equal(x, b'\r') || any_equal(x, b'\n') {
            return true;
        }
    }
    words.remainder().iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

pub(super) fn json_opt_str(out: &mut Vec<u8>, s: &str) {
    if s.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        json_str(out, s);
    }
}

pub(super) fn json_opt_f64(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => json_f64(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

pub(super) fn json_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        coord(out, v);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// Shortest round-trip text of a coordinate. Coordinates are stored at 7 decimals (1 cm), and
/// for a double that is the nearest one to such a decimal the shortest text is that decimal
/// with its trailing zeros dropped: written here with integer arithmetic, about four times
/// faster than the general algorithm, which stays the path for anything else.
fn coord(out: &mut Vec<u8>, v: f64) {
    let scaled = (v * 1e7).round();
    if v.abs() >= 1e-3 && scaled.abs() < 1e15 && scaled / 1e7 == v {
        let n = scaled as i64;
        if n < 0 {
            out.push(b'-');
        }
        let n = n.unsigned_abs();
        out.extend_from_slice(itoa::Buffer::new().format(n / 10_000_000).as_bytes());
        out.push(b'.');
        let mut frac = n % 10_000_000;
        if frac == 0 {
            out.push(b'0');
            return;
        }
        let mut digits = 7;
        while frac.is_multiple_of(10) {
            frac /= 10;
            digits -= 1;
        }
        let mut buf = [b'0'; 7];
        for i in (0..digits).rev() {
            buf[i] = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        out.extend_from_slice(&buf[..digits]);
    } else {
        out.extend_from_slice(ryu::Buffer::new().format(v).as_bytes());
    }
}

pub(super) fn json_time(out: &mut Vec<u8>, t: i64, times: &mut TimeCache) {
    if t == NULL_TIME {
        out.extend_from_slice(b"null");
    } else {
        out.push(b'"');
        out.extend_from_slice(times.get(t));
        out.push(b'"');
    }
}

/// A location's stable id: `loc_` and 16 hex digits of the hash of its primary source id.
pub(super) fn json_id(out: &mut Vec<u8>, id: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = *b"\"loc_0000000000000000\"";
    for k in 0..16 {
        buf[5 + k] = HEX[((id >> (60 - 4 * k)) & 0xf) as usize];
    }
    out.extend_from_slice(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_json_strings() {
        let mut out = Vec::new();
        json_str(&mut out, "a\"b\\c\nd\u{1}é");
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\nd\\u0001é\"");
    }
    #[test]
    fn escape_check_agrees_with_the_bytewise_rule() {
        let bytewise = |s: &[u8]| s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        let mut cases: Vec<Vec<u8>> = vec![b"".to_vec(), b"plain text, longer than eight".to_vec(), "東京 Café ☕".as_bytes().to_vec()];
        for special in [b'"', b'\\', b'\n', 0x00, 0x1f, 0x7f, 0x80, 0xff, b' '] {
            for pos in 0..20 {
                let mut v = b"abcdefghijklmnopqrst".to_vec();
                v[pos] = special;
                cases.push(v);
            }
        }
        let csv_bytewise = |s: &[u8]| s.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'));
        for special in [b',', b'\r'] {
            for pos in 0..20 {
                let mut v = b"abcdefghijklmnopqrst".to_vec();
                v[pos] = special;
                cases.push(v);
            }
        }
        for c in cases {
            assert_eq!(needs_json_escape(&c), bytewise(&c), "{c:?}");
            assert_eq!(needs_csv_quotes(&c), csv_bytewise(&c), "{c:?}");
        }
    }
    #[test]
    fn writes_ids_as_16_hex_digits() {
        let mut out = Vec::new();
        json_id(&mut out, 0x0123_4567_89ab_cdef);
        assert_eq!(String::from_utf8(out).unwrap(), "\"loc_0123456789abcdef\"");
    }
    #[test]
    fn coordinates_print_as_the_shortest_round_trip_text() {
        // Against ryu (the general shortest-text algorithm) over coordinates at 7 decimals and
        // values that are not, which must take the general path.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut cases = vec![0.0, -0.0, 1e-9, 5e-4, 12.0, -180.0, 90.0, 0.1, 41.8781, -87.6298, 0.1 + 0.2, 179.99999995];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = (x % 3_600_000_001) as i64 - 1_800_000_000;
            cases.push(n as f64 / 1e7);
            cases.push(f64::from_bits(x) % 180.0);
        }
        for v in cases.into_iter().filter(|v: &f64| v.is_finite()) {
            let mut out = Vec::new();
            coord(&mut out, v);
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{text} does not read back as {v:?}");
            assert_eq!(text, ryu::Buffer::new().format(v), "{v:?}");
        }
    }
}
