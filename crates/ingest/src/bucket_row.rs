//! The source rows reconciliation holds once their brand is known, only the fields merging
//! reads. A full-size build holds ten million of them at once, and they set its peak: with a
//! boxed string per field a row took about 370 bytes (up to ten allocations, each rounded up to
//! the allocator's size class), with its text in one allocation about 225. Here a brand's rows
//! from one import keep their fixed fields in one vector and all their text in one string, with
//! no allocation of their own: 48 bytes a row plus its text (scale 1: 9.78 M rows held in
//! 1.47 GiB with a head of 56, 2.04 with one allocation a row).
//!
//! A brand's stores mostly share a name and a few sets of opening hours, which were a third
//! of the text held (scale 1: 24 of 78 bytes a row). Each bucket keeps those two fields once
//! per distinct value ([`Shared`]), and a row holds the value's number in their place.

use storemap_core::SourceType;

use crate::SourceRow;

/// The text fields, in the order they lie in a row's text: the [`SHARED_FIELDS`] first.
#[derive(Clone, Copy)]
enum Field {
    Name,
    /// `opening_hours`, normal form (`hours.rs`).
    OpeningHours,
    SourceId,
    /// ATP's `<spider>/<ref>`, the other id Overture's `record_id` may use.
    AltId,
    Address,
    City,
    State,
    Postcode,
    Country,
    Phone,
}

const FIELDS: usize = 10;

/// The fields kept in the bucket's [`Shared`] values, the row holding each one's number: those
/// a brand's rows repeat. Cities, states and countries repeat too, but they are short, so a
/// number saves them a byte or two while its lookup costs a hash on every row appended.
const SHARED_FIELDS: usize = 2;

/// A row's text is at most this long, so its field ends fit in 16 bits. A row whose fields add
/// up to more (no store's do) has each field cut to [`LONG_FIELD`] bytes.
const MAX_ROW_TEXT: usize = u16::MAX as usize;
const LONG_FIELD: usize = 4096;

/// `seen_at` of a source that did not say when it saw the store.
const NOT_SEEN: u32 = u32::MAX;
/// `seen_at` of a time before 1970 or after 2106 (no source's), kept in the bucket's `far_seen`.
const SEEN_FAR: u32 = u32::MAX - 1;

/// One row's fixed fields, 48 bytes: ten million of them at scale 1.
#[derive(Debug, Clone, Copy)]
struct Head {
    lat: f64,
    lng: f64,
    /// When the source last saw the store, unix seconds (or [`NOT_SEEN`], [`SEEN_FAR`]).
    seen_at: u32,
    /// Where the row's text begins in the bucket's text.
    start: u32,
    /// The row's first record in the bucket's `derived`, and how many it has (Overture gives
    /// one to three; past 255 the rest are left out). A byte keeps the head at 48 bytes.
    derived: u32,
    derived_n: u8,
    /// Where each field after the shared ones ends, from the end of the shared ones (so they
    /// fit in 16 bits whatever the numbers take, and a renumbering leaves them as they are);
    /// the ids of `derived_from` follow the last.
    ends: [u16; FIELDS - SHARED_FIELDS],
    /// Which optional fields the source gave (bit per [`Field`]): a field given empty is not a
    /// field left out, and merging tells them apart.
    given: u16,
    /// The shared fields' lengths, 3 bits each (a number takes five digits at most), and the
    /// source's discriminant in the top 2 bits.
    packed: u8,
}

impl Head {
    /// `ends` (every field's, from the row's start) and `source` as the head holds them.
    fn pack(ends: [u32; FIELDS], source: SourceType) -> ([u16; FIELDS - SHARED_FIELDS], u8) {
        let rest = std::array::from_fn(|i| u16::try_from(ends[SHARED_FIELDS + i] - ends[1]).expect("a row's other fields are cut to fit"));
        (rest, Head::packed(ends[0], ends[1] - ends[0], source))
    }

    /// The byte holding the shared fields' lengths and the source.
    fn packed(first: u32, second: u32, source: SourceType) -> u8 {
        debug_assert!(first <= 5 && second <= 5, "a shared field holds a number");
        first as u8 | (second as u8) << 3 | (source as u8) << 6
    }

    /// Where each field ends, from the row's start.
    fn ends(&self) -> [u32; FIELDS] {
        let first = u32::from(self.packed & 7);
        let second = first + u32::from(self.packed >> 3 & 7);
        std::array::from_fn(|i| match i {
            0 => first,
            1 => second,
            _ => second + u32::from(self.ends[i - SHARED_FIELDS]),
        })
    }

    fn source(&self) -> SourceType {
        SourceType::ALL[usize::from(self.packed >> 6)]
    }
}

/// The rows one import gave one brand (or, joined, every import's).
#[derive(Debug, Clone, Default)]
pub struct Bucket {
    heads: Vec<Head>,
    text: String,
    /// Every row's `derived_from` in row order: the source and where its id ends in `text`.
    derived: Vec<(SourceType, u32)>,
    /// The values of the rows' [`SHARED_FIELDS`].
    shared: Shared,
    /// The `seen_at` of rows whose head says [`SEEN_FAR`], by row, in row order.
    far_seen: Vec<(u32, i64)>,
}

/// Distinct values of a bucket's shared fields, each once, numbered in the order they came. A
/// row's shared field holds its value's number in base 128, one ASCII byte a digit (so the
/// row's text stays UTF-8), most significant first: a brand's first 128 values take a byte. A
/// field given empty holds nothing, as before.
#[derive(Debug, Clone, Default)]
struct Shared {
    text: String,
    /// Where each value ends in `text`.
    ends: Vec<u32>,
    /// Each value's number, found by its text, while rows are added; let go when the bucket is
    /// complete (`shrink_to_fit`) and made again if rows are added after.
    index: hashbrown::HashTable<u32>,
}

fn hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(s)
}

impl Shared {
    fn value(&self, n: u32) -> &str {
        value(&self.text, &self.ends, n)
    }

    /// The number of `s`, given one if it is new.
    fn number(&mut self, s: &str) -> u32 {
        if self.index.len() < self.ends.len() {
            let Shared { text, ends, index } = self;
            *index = hashbrown::HashTable::with_capacity(ends.len());
            for n in 0..ends.len() as u32 {
                index.insert_unique(hash(value(text, ends, n)), n, |&m| hash(value(text, ends, m)));
            }
        }
        let Shared { text, ends, index } = self;
        match index.entry(hash(s), |&n| value(text, ends, n) == s, |&n| hash(value(text, ends, n))) {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let n = u32::try_from(ends.len()).expect("a bucket holds under 4 G distinct values");
                e.insert(n);
                text.push_str(s);
                ends.push(u32::try_from(text.len()).expect("a bucket's shared values hold under 4 GiB of text"));
                n
            }
        }
    }

    fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.index = hashbrown::HashTable::new();
    }
}

fn value<'a>(text: &'a str, ends: &[u32], n: u32) -> &'a str {
    let n = n as usize;
    let start = if n == 0 { 0 } else { ends[n - 1] as usize };
    &text[start..ends[n] as usize]
}

/// The digits `n` takes as a shared field holds it.
fn digits(n: u32) -> usize {
    (32 - n.leading_zeros()).max(1).div_ceil(7) as usize
}

/// Writes `n` as a shared field holds it.
fn encode(n: u32, out: &mut String) {
    out.extend((0..digits(n)).rev().map(|d| char::from((n >> (7 * d)) as u8 & 0x7f)));
}

fn decode(digits: &str) -> u32 {
    digits.bytes().fold(0, |n, d| (n << 7) | u32::from(d))
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
            Some(&r.name),
            r.opening_hours.as_deref(),
            Some(&r.source_id),
            alt_id.as_deref(),
            r.address.as_deref(),
            r.city.as_deref(),
            r.state.as_deref(),
            r.postcode.as_deref(),
            r.country.as_deref(),
            r.phone.as_deref(),
        ];
        let total = fields.iter().map(|f| f.map_or(0, str::len)).sum::<usize>() + r.derived_from.iter().map(|(_, id)| id.len()).sum::<usize>();
        let limit = if total > MAX_ROW_TEXT { LONG_FIELD } else { usize::MAX };
        let start = self.text.len();
        // The row's text as given: what the limits count, whatever the shared fields take here.
        let mut given_len = 0;
        let (mut ends, mut given) = ([0u32; FIELDS], 0u16);
        for (i, f) in fields.iter().enumerate() {
            if let Some(s) = f {
                let s = cut(s, limit);
                given_len += s.len();
                if i < SHARED_FIELDS && !s.is_empty() {
                    let n = self.shared.number(s);
                    encode(n, &mut self.text);
                } else {
                    self.text.push_str(s);
                }
                given |= 1 << i;
            }
            ends[i] = (self.text.len() - start) as u32;
        }
        let derived = self.derived.len() as u32;
        let mut derived_n = 0u8;
        for (s, id) in &r.derived_from {
            let id = cut(id, limit);
            if given_len + id.len() > MAX_ROW_TEXT || derived_n == u8::MAX {
                break;
            }
            given_len += id.len();
            self.text.push_str(id);
            self.derived.push((*s, self.position()));
            derived_n += 1;
        }
        let seen_at = match r.seen_at {
            // The 56-byte head took i64::MIN for "not said" (no source gives it), and so does this.
            None | Some(i64::MIN) => NOT_SEEN,
            Some(t) => u32::try_from(t).ok().filter(|&t| t < SEEN_FAR).unwrap_or_else(|| {
                self.far_seen.push((self.heads.len() as u32, t));
                SEEN_FAR
            }),
        };
        let (ends, packed) = Head::pack(ends, source);
        self.heads.push(Head {
            lat: r.lat,
            lng: r.lng,
            seen_at,
            start: u32::try_from(start).expect("a brand's rows from one source hold under 4 GiB of text"),
            derived,
            derived_n,
            ends,
            given,
            packed,
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
        // Every part's values numbered first: their numbers here set the text's length.
        let numbers: Vec<Vec<u32>> = parts.iter().map(|p| out.numbers_of(&p.shared)).collect();
        out.heads.reserve_exact(parts.iter().map(|p| p.heads.len()).sum());
        out.text.reserve_exact(parts.iter().zip(&numbers).map(|(p, n)| p.text_len_with(n)).sum());
        out.derived.reserve_exact(parts.iter().map(|p| p.derived.len()).sum());
        for (p, n) in parts.iter().zip(&numbers) {
            out.append_with(p, n);
        }
        out
    }

    /// Appends `other`'s rows after these.
    pub(crate) fn append(&mut self, other: Bucket) {
        let numbers = self.numbers_of(&other.shared);
        self.append_with(&other, &numbers);
    }

    /// The numbers `shared`'s values have here, each given one if new.
    fn numbers_of(&mut self, shared: &Shared) -> Vec<u32> {
        (0..shared.ends.len() as u32).map(|n| self.shared.number(shared.value(n))).collect()
    }

    /// The length of this bucket's text with its shared fields numbered as `numbers` says.
    fn text_len_with(&self, numbers: &[u32]) -> usize {
        let mut len = self.text.len();
        for h in &self.heads {
            let (mut from, start) = (0, h.start as usize);
            for end in &h.ends()[..SHARED_FIELDS] {
                let held = &self.text[start + from..start + *end as usize];
                if !held.is_empty() {
                    len = len + digits(numbers[decode(held) as usize]) - held.len();
                }
                from = *end as usize;
            }
        }
        len
    }

    /// Appends `other`'s rows after these, `numbers` giving each of its shared values' number
    /// here: each row's shared fields written again, the rest of its text copied.
    fn append_with(&mut self, other: &Bucket, numbers: &[u32]) {
        self.derived.reserve(other.derived.len());
        let rows = self.heads.len() as u32;
        self.far_seen.extend(other.far_seen.iter().map(|&(row, t)| (row + rows, t)));
        self.heads.reserve(other.heads.len());
        for h in &other.heads {
            let (from, start) = (h.start as usize, self.position());
            let old_ends = h.ends();
            let mut lengths = [0u32; SHARED_FIELDS];
            let mut read = 0;
            for (length, end) in lengths.iter_mut().zip(&old_ends[..SHARED_FIELDS]) {
                let held = &other.text[from + read..from + *end as usize];
                if !held.is_empty() {
                    let n = numbers[decode(held) as usize];
                    encode(n, &mut self.text);
                    *length = digits(n) as u32;
                }
                read = *end as usize;
            }
            // The other fields' ends count from the shared ones' end, so they stand; the ids,
            // whose ends count from the bucket's start, move by what the numbers' lengths changed.
            let (new, old) = (lengths.iter().sum::<u32>(), old_ends[SHARED_FIELDS - 1]);
            let own = &other.derived[h.derived as usize..(h.derived + u32::from(h.derived_n)) as usize];
            let row_end = own.last().map_or(from + old_ends[FIELDS - 1] as usize, |&(_, end)| end as usize);
            self.text.push_str(&other.text[from + read..row_end]);
            // Past 4 GiB the offsets would wrap: refused, as `push` does.
            self.position();
            let moved = |end: u32| end - from as u32 - old + start + new;
            let derived = self.derived.len() as u32;
            self.derived.extend(own.iter().map(|&(s, end)| (s, moved(end))));
            let packed = Head::packed(lengths[0], lengths[1], h.source());
            self.heads.push(Head { start, packed, derived, ..*h });
        }
    }

    /// Gives back the room the vectors grew into and will not use (an import's bucket is
    /// complete once the import ends).
    pub fn shrink_to_fit(&mut self) {
        self.heads.shrink_to_fit();
        self.text.shrink_to_fit();
        self.derived.shrink_to_fit();
        self.shared.shrink_to_fit();
        self.far_seen.shrink_to_fit();
    }

    pub fn get(&self, i: usize) -> BucketRow<'_> {
        let h = &self.heads[i];
        let ends = h.ends();
        let start = h.start as usize;
        let fields_end = start + ends[FIELDS - 1] as usize;
        let derived = &self.derived[h.derived as usize..h.derived as usize + h.derived_n as usize];
        let row_end = derived.last().map_or(fields_end, |&(_, end)| end as usize);
        BucketRow {
            source: h.source(),
            lat: h.lat,
            lng: h.lng,
            seen_at: match h.seen_at {
                NOT_SEEN => None,
                SEEN_FAR => self.far_seen.binary_search_by_key(&(i as u32), |&(row, _)| row).ok().map(|at| self.far_seen[at].1),
                t => Some(i64::from(t)),
            },
            text: &self.text[start..row_end],
            ends,
            given: h.given,
            derived,
            base: start as u32,
            shared: &self.shared,
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
    ends: [u32; FIELDS],
    given: u16,
    /// Its `derived_from`: each id ends at the offset given, in the bucket's text.
    derived: &'a [(SourceType, u32)],
    /// Where `text` begins in the bucket's text.
    base: u32,
    shared: &'a Shared,
}

impl<'a> BucketRow<'a> {
    fn field(&self, f: Field) -> Option<&'a str> {
        let i = f as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        (self.given & (1 << i) != 0).then(|| {
            let text = &self.text[start..self.ends[i] as usize];
            if i < SHARED_FIELDS && !text.is_empty() {
                self.shared.value(decode(text))
            } else {
                text
            }
        })
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
    fn numbers_are_ascii_digits_and_read_back() {
        // 7 bits a digit: 2^7, 2^14, 2^21 and 2^28 each take one more.
        for (n, len) in [(0, 1), (1, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (2_097_152, 4), (u32::MAX, 5)] {
            let mut s = String::new();
            encode(n, &mut s);
            assert!(s.bytes().all(|b| b < 0x80), "{n}: {s:?}");
            assert_eq!((s.len(), digits(n)), (len, len), "{n}: the fewest digits");
            assert_eq!(decode(&s), n);
        }
    }

    /// `n` rows named from `names`, every third with the same hours, the others none or empty.
    fn named(names: impl Iterator<Item = String>) -> Vec<SourceRow> {
        names
            .enumerate()
            .map(|(i, name)| SourceRow {
                source_id: format!("ov-{name}"),
                name,
                opening_hours: match i % 3 {
                    0 => Some("Mo-Fr 08:00-18:00".into()),
                    1 => Some(String::new()),
                    _ => None,
                },
                ..full()
            })
            .collect()
    }

    #[test]
    fn a_name_and_hours_many_rows_share_are_held_once() {
        let rows = named((0..1000).map(|i| format!("Store {}", i % 2)));
        let mut bucket = Bucket::default();
        rows.iter().for_each(|r| bucket.push(r.clone()));
        assert_eq!(bucket.shared.ends.len(), 3, "two names and one set of hours");
        let given: usize = rows.iter().map(|r| r.name.len() + r.opening_hours.as_ref().map_or(0, String::len)).sum();
        let held: usize = bucket.heads.iter().map(|h| h.ends()[SHARED_FIELDS - 1] as usize).sum();
        assert_eq!(held, 1000 + 334, "a byte a name and a byte for each row's hours but the empty ones, against {given}");
        for (b, r) in bucket.iter().zip(&rows) {
            check(b, r);
        }
    }

    #[test]
    fn buckets_numbered_apart_are_joined_with_their_values_numbered_again() {
        // The first part numbers a0 0, its hours 1, then a1 to a299 2 to 300: two digits from
        // a127 on. The second numbers b0 0, the hours 1, b1 to b199 2 to 200 (two digits from
        // b127), then a0 to a9 201 to 210; joined, its b names are numbered 301 to 500 and its a
        // names as the first part's.
        let first = named((0..300).map(|i| format!("a{i}")));
        let second = named((0..200).map(|i| format!("b{i}")).chain((0..10).map(|i| format!("a{i}"))));
        let (mut a, mut b) = (Bucket::default(), Bucket::default());
        first.iter().for_each(|r| a.push(r.clone()));
        second.iter().for_each(|r| b.push(r.clone()));
        let (a_len, b_len) = (a.text.len(), b.text.len());

        let mut joined = Bucket::default();
        for part in [&a, &b] {
            let numbers = joined.numbers_of(&part.shared);
            let (expected, before) = (part.text_len_with(&numbers), joined.text.len());
            joined.append_with(part, &numbers);
            assert_eq!(joined.text.len() - before, expected, "the length concat reserves is the length written");
        }
        assert_eq!(joined.shared.ends.len(), 501, "each name once, and the hours");
        let concat = Bucket::concat(vec![a, b]);
        assert_eq!(concat.text.len(), joined.text.len());
        // b0 to b126 gain a digit, a0 to a9 lose one.
        assert_eq!(concat.text.len(), a_len + b_len + 127 - 10);
        for bucket in [&joined, &concat] {
            assert_eq!(bucket.len(), 510);
            for (got, want) in bucket.iter().zip(first.iter().chain(&second)) {
                check(got, want);
            }
        }
    }

    #[test]
    fn rows_added_to_a_complete_bucket_find_its_values() {
        let mut bucket = Bucket::default();
        let rows = named((0..10).map(|i| format!("s{}", i % 4)));
        rows[..5].iter().for_each(|r| bucket.push(r.clone()));
        bucket.shrink_to_fit();
        rows[5..].iter().for_each(|r| bucket.push(r.clone()));
        assert_eq!(bucket.shared.ends.len(), 5, "four names and the hours, none twice");
        for (b, r) in bucket.iter().zip(&rows) {
            check(b, r);
        }
    }

    #[test]
    fn a_row_head_is_48_bytes() {
        // The figure the build's memory per row rests on (bench/RESULTS.md).
        assert_eq!(std::mem::size_of::<Head>(), 48);
    }

    #[test]
    fn every_source_and_any_time_come_back() {
        // Each source in the head's two bits, and times a u32 of seconds holds or not.
        let times = [None, Some(0), Some(1_790_000_000), Some(i64::from(SEEN_FAR) - 1), Some(i64::from(SEEN_FAR)), Some(-1), Some(i64::MAX)];
        let rows: Vec<SourceRow> = SourceType::ALL
            .iter()
            .flat_map(|&s| times.map(|t| SourceRow { source: Some(s), seen_at: t, source_id: format!("{s:?}{t:?}"), ..full() }))
            .collect();
        let (mut a, mut b) = (Bucket::default(), Bucket::default());
        rows[..9].iter().for_each(|r| a.push(r.clone()));
        rows[9..].iter().for_each(|r| b.push(r.clone()));
        assert_eq!((a.far_seen.len(), b.far_seen.len()), (3, 9), "three times of the seven are far: {:?}", a.far_seen);
        for bucket in [Bucket::concat(vec![a.clone(), b.clone()]), {
            a.append(b);
            a
        }] {
            assert_eq!(bucket.len(), rows.len());
            for (got, want) in bucket.iter().zip(&rows) {
                check(got, want);
            }
        }
        // i64::MIN was the old head's "not said", and still reads so.
        let mut c = Bucket::default();
        c.push(SourceRow { seen_at: Some(i64::MIN), ..full() });
        assert_eq!(c.get(0).seen_at, None);
    }

    #[test]
    fn a_row_at_the_length_limit_keeps_its_fields_whatever_its_numbers_take() {
        // A row of exactly MAX_ROW_TEXT bytes as given is not cut; its one-byte name's number
        // takes two digits once 200 names come before it, one byte past the limit.
        let long = SourceRow { source: Some(SourceType::Osm), source_id: "n".repeat(MAX_ROW_TEXT - 1), name: "x".into(), seen_at: None, ..Default::default() };
        let others: Vec<SourceRow> =
            (0..200).map(|i| SourceRow { name: format!("o{i}"), ..long.clone() }).map(|r| SourceRow { source_id: "n1".into(), ..r }).collect();
        let mut pushed = Bucket::default();
        others.iter().chain([&long]).for_each(|r| pushed.push(r.clone()));
        // The same row numbered 0 in a bucket of its own, then renumbered 200 by the join.
        let (mut first, mut alone) = (Bucket::default(), Bucket::default());
        others.iter().for_each(|r| first.push(r.clone()));
        alone.push(long.clone());
        let concat = Bucket::concat(vec![first.clone(), alone.clone()]);
        first.append(alone);
        for bucket in [&pushed, &concat, &first] {
            assert_eq!(bucket.len(), 201);
            check(bucket.get(200), &long);
            assert_eq!(bucket.get(200).name(), "x");
        }
    }

    #[test]
    fn a_cut_row_keeps_the_ids_its_given_text_leaves_room_for() {
        // Fields past the limit are cut to LONG_FIELD bytes each; ids follow while the text as
        // given (not as held: the name and hours are numbers here) stays within MAX_ROW_TEXT.
        let long = "é".repeat(40_000);
        let ids: Vec<(SourceType, String)> = (0..20).map(|i| (SourceType::Osm, format!("{i:0>4096}"))).collect();
        let r = SourceRow { name: long.clone(), address: Some(long), derived_from: ids, ..full() };
        let fields = LONG_FIELD * 2 + ["ov-1", "spider/42", "AB1 2CD", "GB", "Mo-Fr 08:00-18:00"].iter().map(|f| f.len()).sum::<usize>();
        let mut bucket = Bucket::default();
        bucket.push(r);
        assert_eq!(bucket.get(0).derived_from().count(), (MAX_ROW_TEXT - fields) / 4096);
        assert_eq!(bucket.get(0).derived_from().count(), 13);
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
