//! A source row as reconciliation keeps it once its brand is known: only the fields merging
//! reads, its text end to end in one allocation. A full-size build holds ten million of these
//! at once, and they set its peak: with a boxed string per field a row took about 370 bytes
//! (up to ten allocations, each rounded up to the allocator's size class), this way about 225
//! (scale 1: 9.78 M rows held in 3.39 GiB before, 2.04 GiB after).

use storemap_core::SourceType;

use crate::SourceRow;

/// The text fields, in the order they lie in [`BucketRow::text`].
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

#[derive(Debug, Clone)]
pub struct BucketRow {
    pub source: SourceType,
    pub lat: f64,
    pub lng: f64,
    pub seen_at: Option<i64>,
    /// Records of other sources this one re-publishes (Overture's `sources[]`); empty, and no
    /// allocation, for every other source.
    pub derived_from: Box<[(SourceType, Box<str>)]>,
    /// Every text field end to end, in [`Field`] order.
    text: Box<str>,
    /// Where each field ends in `text`.
    ends: [u32; FIELDS],
    /// Which optional fields the source gave (bit per [`Field`]): a field given empty is not a
    /// field left out, and merging tells them apart.
    given: u16,
}

impl From<SourceRow> for BucketRow {
    fn from(r: SourceRow) -> BucketRow {
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
        let mut text = String::with_capacity(fields.iter().map(|f| f.map_or(0, str::len)).sum());
        let (mut ends, mut given) = ([0u32; FIELDS], 0u16);
        for (i, f) in fields.iter().enumerate() {
            if let Some(s) = f {
                text.push_str(s);
                given |= 1 << i;
            }
            // A row's text past 4 GiB is not a store; the importers' field limits are far below.
            ends[i] = u32::try_from(text.len()).expect("a source row's text fits in 4 GiB");
        }
        BucketRow {
            source,
            lat: r.lat,
            lng: r.lng,
            seen_at: r.seen_at,
            derived_from: r.derived_from.into_iter().map(|(s, id)| (s, id.into_boxed_str())).collect(),
            text: text.into_boxed_str(),
            ends,
            given,
        }
    }
}

impl BucketRow {
    fn field(&self, f: Field) -> Option<&str> {
        let i = f as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        (self.given & (1 << i) != 0).then(|| &self.text[start..self.ends[i] as usize])
    }

    pub fn source_id(&self) -> &str {
        self.field(Field::SourceId).unwrap_or_default()
    }
    pub fn alt_id(&self) -> Option<&str> {
        self.field(Field::AltId)
    }
    pub fn name(&self) -> &str {
        self.field(Field::Name).unwrap_or_default()
    }
    pub fn address(&self) -> Option<&str> {
        self.field(Field::Address)
    }
    pub fn city(&self) -> Option<&str> {
        self.field(Field::City)
    }
    pub fn state(&self) -> Option<&str> {
        self.field(Field::State)
    }
    pub fn postcode(&self) -> Option<&str> {
        self.field(Field::Postcode)
    }
    pub fn country(&self) -> Option<&str> {
        self.field(Field::Country)
    }
    pub fn phone(&self) -> Option<&str> {
        self.field(Field::Phone)
    }
    pub fn opening_hours(&self) -> Option<&str> {
        self.field(Field::OpeningHours)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_comes_back_as_given_empty_and_missing_apart() {
        let r = SourceRow {
            source: Some(SourceType::Atp),
            source_id: "atp-1".into(),
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
            derived_from: vec![(SourceType::Osm, "n1".into())],
            ..Default::default()
        };
        let b = BucketRow::from(r.clone());
        assert_eq!((b.source, b.lat, b.lng, b.seen_at), (SourceType::Atp, 1.5, -2.5, Some(7)));
        assert_eq!((b.source_id(), b.alt_id(), b.name()), ("atp-1", Some("spider/42"), "Café Ñ"));
        assert_eq!(b.address(), r.address.as_deref());
        assert_eq!(b.city(), None);
        assert_eq!(b.state(), Some(""));
        assert_eq!(b.postcode(), r.postcode.as_deref());
        assert_eq!(b.country(), Some("GB"));
        assert_eq!(b.phone(), None);
        assert_eq!(b.opening_hours(), r.opening_hours.as_deref());
        assert_eq!(&*b.derived_from, &[(SourceType::Osm, Box::<str>::from("n1"))]);
        // Nothing but an id and a name: no other field, and no alt id.
        let bare = BucketRow::from(SourceRow { source: Some(SourceType::Osm), source_id: "n9".into(), name: String::new(), ..Default::default() });
        assert_eq!((bare.source_id(), bare.alt_id(), bare.name(), bare.address(), bare.opening_hours()), ("n9", None, "", None, None));
    }
}
