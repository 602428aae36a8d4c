//! Rows -> response bytes. One writer per format, each writing straight into one `Vec<u8>`
//! that crosses to Node as a Buffer without a copy.

use crate::model::{SourceType, StorefrontType};
use crate::snapshot::{Snapshot, NULL_TIME};
use crate::time::format_iso;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    GeoJson,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "geojson" => Some(Format::GeoJson),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Adds the five provenance fields (JSON and GeoJSON only; CSV never has them).
    pub provenance: bool,
    /// The envelope's `brand` (JSON): the canonical name, or names joined for several brands.
    pub brand_label: String,
    /// The envelope's `region` (JSON).
    pub region: String,
}

/// The CSV header: the contract's nine columns in order, then the two DESIGN.md adds.
pub const CSV_HEADER: &str = "brand,name,lat,lng,country,state,city,postcode,address,phone,last_updated\r\n";

pub fn write_rows(snap: &Snapshot, rows: &[u32], format: Format, opts: &WriteOptions) -> Vec<u8> {
    // About 300 bytes a row in JSON; reserving avoids most regrowth copies.
    let mut out = Vec::with_capacity(256 + rows.len() * 320);
    match format {
        Format::Json => write_json(snap, rows, opts, &mut out),
        Format::Csv => write_csv(snap, rows, &mut out),
        Format::GeoJson => write_geojson(snap, rows, opts, &mut out),
    }
    out
}

fn write_json(snap: &Snapshot, rows: &[u32], opts: &WriteOptions, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"brand\":");
    json_str(out, &opts.brand_label);
    out.extend_from_slice(b",\"region\":");
    json_str(out, &opts.region);
    out.extend_from_slice(b",\"count\":");
    out.extend_from_slice(itoa::Buffer::new().format(rows.len()).as_bytes());
    out.extend_from_slice(b",\"locations\":[");
    // Rows come grouped by brand, in snapshot order: first and last differ iff several brands.
    let many_brands = match (rows.first(), rows.last()) {
        (Some(&f), Some(&l)) => snap.brand_of_row(f) != snap.brand_of_row(l),
        _ => false,
    };
    let mut brand = BrandCursor::default();
    let mut times = TimeCache::default();
    for (i, &r) in rows.iter().enumerate() {
        let r = r as usize;
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        json_id(out, snap.id[r]);
        if many_brands {
            out.extend_from_slice(b",\"brand\":");
            json_str(out, brand.name(snap, r as u32));
        }
        out.extend_from_slice(b",\"name\":");
        json_str(out, snap.strings.get(snap.name[r]));
        out.extend_from_slice(b",\"lat\":");
        json_f64(out, snap.lat[r]);
        out.extend_from_slice(b",\"lng\":");
        json_f64(out, snap.lng[r]);
        common_fields(snap, r, out, &mut times);
        if opts.provenance {
            provenance_fields(snap, r, out, &mut times);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

/// The brand of consecutive rows, found by walking the brand ranges once instead of a search
/// per row.
#[derive(Default)]
struct BrandCursor {
    brand: u32,
    end: u32,
    started: bool,
}

impl BrandCursor {
    fn name<'a>(&mut self, snap: &'a Snapshot, row: u32) -> &'a str {
        if !self.started || row >= self.end || row < snap.brands[self.brand as usize].row_start {
            self.brand = snap.brand_of_row(row);
            self.end = snap.brands[self.brand as usize].row_end;
            self.started = true;
        }
        &snap.brands[self.brand as usize].name
    }
}

/// The last timestamp formatted: nearly every row carries the same refresh time.
#[derive(Default)]
struct TimeCache {
    t: Option<i64>,
    text: String,
}

impl TimeCache {
    fn get(&mut self, t: i64) -> &[u8] {
        if self.t != Some(t) {
            self.t = Some(t);
            self.text = format_iso(t);
        }
        self.text.as_bytes()
    }
}

/// The fields JSON and GeoJSON share, each preceded by a comma.
fn common_fields(snap: &Snapshot, r: usize, out: &mut Vec<u8>, times: &mut TimeCache) {
    out.extend_from_slice(b",\"country\":");
    json_str(out, &snap.countries[snap.country[r] as usize]);
    for (key, col) in [
        (&b",\"state\":"[..], &snap.state),
        (b",\"city\":", &snap.city),
        (b",\"address\":", &snap.address),
        (b",\"postcode\":", &snap.postcode),
        (b",\"phone\":", &snap.phone),
    ] {
        out.extend_from_slice(key);
        json_opt_str(out, snap.strings.get(col[r]));
    }
    out.extend_from_slice(b",\"last_updated\":");
    json_time(out, snap.last_updated[r], times);
}

fn provenance_fields(snap: &Snapshot, r: usize, out: &mut Vec<u8>, times: &mut TimeCache) {
    if !snap.row_has_provenance(r) {
        out.extend_from_slice(b",\"source_types\":null,\"confidence\":null,\"storefront_type\":null,\"alias_sources\":null,\"last_verified\":null");
        return;
    }
    out.extend_from_slice(b",\"source_types\":[");
    for (i, s) in snap.row_sources(r).iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(out, s.as_str());
    }
    out.extend_from_slice(b"],\"confidence\":");
    // Three decimals: the score is a model output, more digits would be noise.
    json_f64(out, (snap.confidence[r] as f64 * 1000.0).round() / 1000.0);
    out.extend_from_slice(b",\"storefront_type\":");
    match StorefrontType::from_u8(snap.storefront[r]) {
        Some(t) => json_str(out, t.as_str()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"alias_sources\":[");
    for (i, (s, id)) in snap.row_aliases(r).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"source_type\":");
        json_str(out, SourceType::as_str(s));
        out.extend_from_slice(b",\"source_id\":");
        json_str(out, id);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"last_verified\":");
    json_time(out, snap.last_verified[r], times);
}

fn write_geojson(snap: &Snapshot, rows: &[u32], opts: &WriteOptions, out: &mut Vec<u8>) {
    let mut brand = BrandCursor::default();
    let mut times = TimeCache::default();
    out.extend_from_slice(b"{\"type\":\"FeatureCollection\",\"features\":[");
    for (i, &r) in rows.iter().enumerate() {
        let r = r as usize;
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"type\":\"Feature\",\"id\":");
        json_id(out, snap.id[r]);
        // GeoJSON order is [lng, lat], the opposite of JSON and CSV.
        out.extend_from_slice(b",\"geometry\":{\"type\":\"Point\",\"coordinates\":[");
        json_f64(out, snap.lng[r]);
        out.push(b',');
        json_f64(out, snap.lat[r]);
        out.extend_from_slice(b"]},\"properties\":{\"brand\":");
        json_str(out, brand.name(snap, r as u32));
        out.extend_from_slice(b",\"name\":");
        json_str(out, snap.strings.get(snap.name[r]));
        common_fields(snap, r, out, &mut times);
        if opts.provenance {
            provenance_fields(snap, r, out, &mut times);
        }
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"]}");
}

fn write_csv(snap: &Snapshot, rows: &[u32], out: &mut Vec<u8>) {
    out.extend_from_slice(CSV_HEADER.as_bytes());
    let mut brand = BrandCursor::default();
    let mut times = TimeCache::default();
    // The brand cell is the same for a brand's every row: quoted once, copied after.
    let mut brand_cell: (*const u8, Vec<u8>) = (std::ptr::null(), Vec::new());
    for &r in rows {
        let r = r as usize;
        let name = brand.name(snap, r as u32);
        if name.as_ptr() != brand_cell.0 {
            brand_cell.1.clear();
            csv_field(&mut brand_cell.1, name);
            brand_cell.0 = name.as_ptr();
        }
        out.extend_from_slice(&brand_cell.1);
        out.push(b',');
        csv_field(out, snap.strings.get(snap.name[r]));
        out.push(b',');
        json_f64(out, snap.lat[r]);
        out.push(b',');
        json_f64(out, snap.lng[r]);
        out.push(b',');
        out.extend_from_slice(snap.countries[snap.country[r] as usize].as_bytes());
        for col in [&snap.state, &snap.city, &snap.postcode, &snap.address, &snap.phone] {
            out.push(b',');
            csv_field(out, snap.strings.get(col[r]));
        }
        out.push(b',');
        if snap.last_updated[r] != NULL_TIME {
            out.extend_from_slice(times.get(snap.last_updated[r]));
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// RFC 4180: quote a field holding a comma, quote, CR or LF, doubling inner quotes.
fn csv_field(out: &mut Vec<u8>, s: &str) {
    if needs_csv_quotes(s.as_bytes()) {
        out.push(b'"');
        for b in s.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

fn json_str(out: &mut Vec<u8>, s: &str) {
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
fn needs_csv_quotes(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if any_equal(x, b',') || any_equal(x, b'"') || any_equal(x, b'\r') || any_equal(x, b'\n') {
            return true;
        }
    }
    words.remainder().iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

fn json_opt_str(out: &mut Vec<u8>, s: &str) {
    if s.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        json_str(out, s);
    }
}

fn json_f64(out: &mut Vec<u8>, v: f64) {
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

fn json_time(out: &mut Vec<u8>, t: i64, times: &mut TimeCache) {
    if t == NULL_TIME {
        out.extend_from_slice(b"null");
    } else {
        out.push(b'"');
        out.extend_from_slice(times.get(t));
        out.push(b'"');
    }
}

/// A location's stable id: `loc_` and 16 hex digits of the hash of its primary source id.
fn json_id(out: &mut Vec<u8>, id: u64) {
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

    #[test]
    fn quotes_csv_fields_only_when_needed() {
        let mut out = Vec::new();
        csv_field(&mut out, "plain");
        out.push(b'|');
        csv_field(&mut out, "Smith, \"Jr\"");
        assert_eq!(String::from_utf8(out).unwrap(), "plain|\"Smith, \"\"Jr\"\"\"");
    }
}
