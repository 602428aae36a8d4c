//! The source rows reconciliation holds once their brand is known, only the fields merging
//! reads. A full-size build holds ten million of them at once, and they set its peak: with a
//! boxed string per field a row took about 370 bytes (up to ten allocations, each rounded up to
//! the allocator's size class), with its text in one allocation about 225. Here a brand's rows
//! from one import keep their fixed fields in one vector and all their text in one string, with
//! no allocation of their own: 56 bytes a row plus its text (scale 1: 9.78 M rows held in
//! 1.47 GiB, 2.04 with one allocation a row).

use storemap_core::SourceType;

use crate::SourceRow;

/// The text fields, in the order they lie in a row's text.
#[derive(Clone, Copy)]
enum Field {
    SourceId,
    /// ATP's `<spider>/<ref>`, the other id Overture's `record_id` may use.
    AltId,
    Name,
    Address,
    City,
    State,
    Postcode,
    Country,
    Phone,
    /// `opening_hours`, normal form (`hours.rs`).
    OpeningHours,
}

const FIELDS: usize = 10;

/// A row's text is at most this long, so its field ends fit in 16 bits. A row whose fields add
/// up to more (no store's do) has each field cut to [`LONG_FIELD`] bytes.
const MAX_ROW_TEXT: usize = u16::MAX as usize;
const LONG_FIELD: usize = 4096;

/// `seen_at` of a source that did not say when it saw the store.
const NOT_SEEN: i64 = i64::MIN;

/// One row's fixed fields.
#[derive(Debug, Clone, Copy)]
struct Head {
    lat: f64,
    lng: f64,
    seen_at: i64,
    /// Where the row's text begins in the bucket's text.
    start: u32,
    /// Where each field ends, from `start`; the ids of `derived_from` follow the last.
    ends: [u16; FIELDS],
    /// The row's first record in the bucket's `derived`, and how many it has (Overture gives
    /// one to three; past 255 the rest are left out). A byte keeps the head at 56 bytes.
    derived: u32,
    derived_n: u8,
    /// Which optional fields the source gave (bit per [`Field`]): a field given empty is not a
    /// field left out, and merging tells them apart.
    given: u16,
    source: SourceType,
}

/// The rows one import gave one brand (or, joined, every import's).
#[derive(Debug, Clone, Default)]
pub struct Bucket {
    heads: Vec<Head>,
    text: String,
    /// Every row's `derived_from` in row order: the source and where its id ends in `text`.
    derived: Vec<(SourceType, u32)>,
}

/// Cuts `s` to at most `n` bytes, at a character boundary.
fn cut(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Bucket {
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    pub fn push(&mut self, r: SourceRow) {
        let source = r.source();
        let alt_id = r.other_ids.into_iter().next();
        let fields: [Option<&str>; FIELDS] = [
            Some(&r.source_id),
            alt_id.as_deref(),
            Some(&r.name),
            r.address.as_deref(),
            r.city.as_deref(),
            r.state.as_deref(),
            r.postcode.as_deref(),
            r.country.as_deref(),
            r.phone.as_deref(),
            r.opening_hours.as_deref(),
        ];
        let total = fields.iter().map(|f| f.map_or(0, str::len)).sum::<usize>() + r.derived_from.iter().map(|(_, id)| id.len()).sum::<usize>();
        let limit = if total > MAX_ROW_TEXT { LONG_FIELD } else { usize::MAX };
        let start = self.text.len();
        let (mut ends, mut given) = ([0u16; FIELDS], 0u16);
        for (i, f) in fields.iter().enumerate() {
            if let Some(s) = f {
                self.text.push_str(cut(s, limit));
                given |= 1 << i;
            }
            ends[i] = (self.text.len() - start) as u16;
        }
        let derived = self.derived.len() as u32;
        let mut derived_n = 0u8;
        for (s, id) in &r.derived_from {
            let id = cut(id, limit);
            if self.text.len() - start + id.len() > MAX_ROW_TEXT || derived_n == u8::MAX {
                break;
            }
            self.text.push_str(id);
            self.derived.push((*s, self.position()));
            derived_n += 1;
        }
        self.heads.push(Head {
            lat: r.lat,
            lng: r.lng,
            seen_at: r.seen_at.unwrap_or(NOT_SEEN),
            start: u32::try_from(start).expect("a brand's rows from one source hold under 4 GiB of text"),
            ends,
            derived,
            derived_n,
            given,
            source,
        });
    }

    fn position(&self) -> u32 {
        u32::try_from(self.text.len()).expect("a brand's rows from one source hold under 4 GiB of text")
    }

    /// The rows of `parts` one after another, each vector allocated once at its full size (a
    /// single part is returned as it is).
    pub fn concat(mut parts: Vec<Bucket>) -> Bucket {
        parts.retain(|p| !p.is_empty());
        if parts.len() <= 1 {
            return parts.pop().unwrap_or_default();
        }
        let mut out = Bucket::default();
        out.heads.reserve_exact(parts.iter().map(|p| p.heads.len()).sum());
        out.text.reserve_exact(parts.iter().map(|p| p.text.len()).sum());
        out.derived.reserve_exact(parts.iter().map(|p| p.derived.len()).sum());
        for p in parts {
            out.append(p);
        }
        out
    }

    /// Appends `other`'s rows after these.
    pub(crate) fn append(&mut self, other: Bucket) {
        let (text_base, derived_base) = (self.position(), self.derived.len() as u32);
        self.text.push_str(&other.text);
        // Past 4 GiB the offsets would wrap: refused, as `push` does.
        self.position();
        self.derived.extend(other.derived.iter().map(|&(s, end)| (s, end + text_base)));
        self.heads.extend(other.heads.iter().map(|h| Head { start: h.start + text_base, derived: h.derived + derived_base, ..*h }));
    }

    /// Gives back the room the vectors grew into and will not use (an import's bucket is
    /// complete once the import ends).
    pub fn shrink_to_fit(&mut self) {
        self.heads.shrink_to_fit();
        self.text.shrink_to_fit();
        self.derived.shrink_to_fit();
    }

    pub fn get(&self, i: usize) -> BucketRow<'_> {
        let h = &self.heads[i];
        let start = h.start as usize;
        let fields_end = start + h.ends[FIELDS - 1] as usize;
        let derived = &self.derived[h.derived as usize..h.derived as usize + h.derived_n as usize];
        let row_end = derived.last().map_or(fields_end, |&(_, end)| end as usize);
        BucketRow {
            source: h.source,
            lat: h.lat,
            lng: h.lng,
            seen_at: (h.seen_at != NOT_SEEN).then_some(h.seen_at),
            text: &self.text[start..row_end],
            ends: h.ends,
            given: h.given,
            derived,
            base: start as u32,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = BucketRow<'_>> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// One held row, as merging reads it.
#[derive(Debug, Clone, Copy)]
pub struct BucketRow<'a> {
    pub source: SourceType,
    pub lat: f64,
    pub lng: f64,
    pub seen_at: Option<i64>,
    /// The row's fields end to end, then its derived ids.
    text: &'a str,
    ends: [u16; FIELDS],
    given: u16,
    /// Its `derived_from`: each id ends at the offset given, in the bucket's text.
    derived: &'a [(SourceType, u32)],
    /// Where `text` begins in the bucket's text.
    base: u32,
}

impl<'a> BucketRow<'a> {
    fn field(&self, f: Field) -> Option<&'a str> {
        let i = f as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        (self.given & (1 << i) != 0).then(|| &self.text[start..self.ends[i] as usize])
    }

    pub fn source_id(&self) -> &'a str {
        self.field(Field::SourceId).unwrap_or_default()
    }
    pub fn alt_id(&self) -> Option<&'a str> {
        self.field(Field::AltId)
    }
    pub fn name(&self) -> &'a str {
        self.field(Field::Name).unwrap_or_default()
    }
    pub fn address(&self) -> Option<&'a str> {
        self.field(Field::Address)
    }
    pub fn city(&self) -> Option<&'a str> {
        self.field(Field::City)
    }
    pub fn state(&self) -> Option<&'a str> {
        self.field(Field::State)
    }
    pub fn postcode(&self) -> Option<&'a str> {
        self.field(Field::Postcode)
    }
    pub fn country(&self) -> Option<&'a str> {
        self.field(Field::Country)
    }
    pub fn phone(&self) -> Option<&'a str> {
        self.field(Field::Phone)
    }
    pub fn opening_hours(&self) -> Option<&'a str> {
        self.field(Field::OpeningHours)
    }

    /// Records of other sources this one re-publishes (Overture's `sources[]`), as (source,
    /// record id).
    pub fn derived_from(&self) -> impl Iterator<Item = (SourceType, &'a str)> + 'a {
        let (text, base) = (self.text, self.base as usize);
        let mut start = self.ends[FIELDS - 1] as usize;
        self.derived.iter().map(move |&(s, end)| {
            let end = end as usize - base;
            let id = &text[start..end];
            start = end;
            (s, id)
        })
    }

    pub fn has_derived(&self) -> bool {
        !self.derived.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> SourceRow {
        SourceRow {
            source: Some(SourceType::Overture),
            source_id: "ov-1".into(),
            other_ids: vec!["spider/42".into(), "ignored".into()],
            lat: 1.5,
            lng: -2.5,
            name: "Café Ñ".into(),
            address: Some("1 High St".into()),
            city: None,
            state: Some(String::new()),
            postcode: Some("AB1 2CD".into()),
            country: Some("GB".into()),
            phone: None,
            opening_hours: Some("Mo-Fr 08:00-18:00".into()),
            seen_at: Some(7),
            derived_from: vec![(SourceType::Osm, "n1".into()), (SourceType::Atp, "atp-ñ".into())],
            ..Default::default()
        }
    }

    fn check(b: BucketRow<'_>, r: &SourceRow) {
        assert_eq!((b.source, b.lat, b.lng, b.seen_at), (r.source(), r.lat, r.lng, r.seen_at));
        assert_eq!((b.source_id(), b.alt_id(), b.name()), (r.source_id.as_str(), r.other_ids.first().map(String::as_str), r.name.as_str()));
        assert_eq!(
            [b.address(), b.city(), b.state(), b.postcode(), b.country(), b.phone(), b.opening_hours()],
            [&r.address, &r.city, &r.state, &r.postcode, &r.country, &r.phone, &r.opening_hours].map(|f| f.as_deref())
        );
        let derived: Vec<(SourceType, String)> = b.derived_from().map(|(s, id)| (s, id.to_string())).collect();
        assert_eq!(derived, r.derived_from);
        assert_eq!(b.has_derived(), !r.derived_from.is_empty());
    }

    #[test]
    fn every_field_comes_back_as_given_empty_and_missing_apart() {
        let bare = SourceRow { source: Some(SourceType::Osm), source_id: "n9".into(), seen_at: None, ..Default::default() };
        let rows = [full(), bare.clone(), SourceRow { source_id: "ov-2".into(), address: Some("2 Low St".into()), ..full() }];
        let mut bucket = Bucket::default();
        rows.iter().for_each(|r| bucket.push(r.clone()));
        assert_eq!(bucket.len(), 3);
        for (b, r) in bucket.iter().zip(&rows) {
            check(b, r);
        }
        assert_eq!((bucket.get(1).alt_id(), bucket.get(1).address(), bucket.get(1).seen_at), (None, None, None));
    }

    #[test]
    fn buckets_appended_keep_every_row() {
        let (mut a, mut b) = (Bucket::default(), Bucket::default());
        let first = [full(), SourceRow { source: Some(SourceType::Fsq), source_id: "f1".into(), ..Default::default() }];
        let second = [SourceRow { source_id: "ov-3".into(), ..full() }, full()];
        first.iter().for_each(|r| a.push(r.clone()));
        second.iter().for_each(|r| b.push(r.clone()));
        let mut a = Bucket::concat(vec![a, Bucket::default(), b]);
        a.shrink_to_fit();
        assert_eq!(a.len(), 4);
        for (got, want) in a.iter().zip(first.iter().chain(&second)) {
            check(got, want);
        }
    }

    #[test]
    fn a_row_head_is_56_bytes() {
        // The figure the build's memory per row rests on (bench/RESULTS.md).
        assert_eq!(std::mem::size_of::<Head>(), 56);
    }

    #[test]
    fn a_row_of_absurd_length_is_cut_not_wrapped() {
        let long = "é".repeat(40_000);
        let r = SourceRow { name: long.clone(), address: Some(long.clone()), ..full() };
        let mut bucket = Bucket::default();
        bucket.push(r);
        let b = bucket.get(0);
        assert_eq!(b.name(), &long[..LONG_FIELD]);
        assert_eq!(b.address(), Some(&long[..LONG_FIELD]));
        assert_eq!((b.source_id(), b.opening_hours()), ("ov-1", Some("Mo-Fr 08:00-18:00")));
        assert_eq!(b.derived_from().count(), 2);
    }
}
