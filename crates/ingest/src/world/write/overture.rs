//! Overture Maps places as GeoParquet with the release's column names and nesting: WKB point
//! geometry, `bbox`, `names`, `brand`, `categories`, `addresses`, `sources` (naming the
//! AllThePlaces or Foursquare record a row was taken from), `operating_status`.

use polars_error::PolarsResult;

use super::atp::atp_feature_id;
use super::parquet::{binaries, numbers, opt_strs, singleton_lists, strs, structs, Column};
use super::{fsq, hex_id, Sighted};
use storemap_core::SourceType;

/// The GERS-style id Overture gives a store's row: derived from the store, so a re-published
/// row can name its origin.
pub(super) fn overture_id(seed: u64, store_key: &str) -> String {
    hex_id(seed, "overture", store_key, 32)
}

#[derive(Default)]
pub(super) struct OvertureColumns {
    id: Vec<String>,
    geometry: Vec<Vec<u8>>,
    xmin: Vec<f32>,
    xmax: Vec<f32>,
    ymin: Vec<f32>,
    ymax: Vec<f32>,
    name: Vec<String>,
    brand_name: Vec<Option<String>>,
    brand_wikidata: Vec<Option<String>>,
    category: Vec<String>,
    confidence: Vec<f64>,
    freeform: Vec<Option<String>>,
    locality: Vec<Option<String>>,
    postcode: Vec<Option<String>>,
    region: Vec<Option<String>>,
    country: Vec<Option<String>>,
    phone: Vec<Option<String>>,
    dataset: Vec<String>,
    record_id: Vec<String>,
    update_time: Vec<String>,
    status: Vec<String>,
}

impl OvertureColumns {
    /// Rows waiting.
    pub(super) fn len(&self) -> usize {
        self.id.len()
    }

    /// Moves another brand's rows after these.
    pub(super) fn append(&mut self, other: OvertureColumns) {
        super::append_columns!(self, other: OvertureColumns; id, geometry, xmin, xmax, ymin, ymax, name, brand_name, brand_wikidata, category, confidence,
            freeform, locality, postcode, region, country, phone, dataset, record_id, update_time, status);
    }

    /// Adds one sighting; returns its id. `spider` is the brand's AllThePlaces spider, for rows
    /// Overture took from AllThePlaces.
    pub(super) fn push(&mut self, x: &Sighted, spider: &str) -> String {
        let (s, store, city, brand) = (x.s, x.store, x.city, x.brand);
        let o = self;
        let id = overture_id(x.seed, x.store_key);
        o.id.push(id.clone());
        o.geometry.push(wkb_point(s.lng, s.lat));
        o.xmin.push((s.lng - 1e-5) as f32);
        o.xmax.push((s.lng + 1e-5) as f32);
        o.ymin.push((s.lat - 1e-5) as f32);
        o.ymax.push((s.lat + 1e-5) as f32);
        o.name.push(s.name.clone());
        o.brand_name.push(s.tag_brand.then(|| brand.name.clone()));
        o.brand_wikidata.push(if s.tag_brand && s.tag_wikidata { brand.wikidata.clone() } else { None });
        o.category.push(overture_category(&brand.category));
        o.confidence.push(if s.closed_marker { 0.0 } else { 0.77 });
        let addr = s.with_address;
        o.freeform.push(addr.then(|| store.address.line.clone()));
        o.locality.push(addr.then(|| crate::world::town::of_store(city, store).to_string()));
        o.postcode.push((addr && !store.postcode.is_empty()).then(|| store.postcode.clone()));
        o.region.push((addr && !city.admin1.is_empty()).then(|| format!("{}-{}", store.country, city.admin1)));
        o.country.push(s.with_country.then(|| store.country.clone()));
        o.phone.push((!store.phone.is_empty()).then(|| store.phone.replace([' ', '-'], "")));
        let (dataset, record) = match s.derived {
            Some(SourceType::Atp) => ("AllThePlaces", atp_feature_id(&store.number.to_string(), spider)),
            Some(SourceType::Fsq) => ("Foursquare", fsq::fsq_id(x.seed, x.store_key)),
            _ => ("meta", hex_id(x.seed, "meta", x.store_key, 15)),
        };
        o.dataset.push(dataset.into());
        o.record_id.push(record);
        o.update_time.push(x.seen.to_string());
        o.status.push(if s.closed_marker { "permanently_closed" } else { "open" }.into());
        id
    }
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(21);
    v.push(1);
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

fn overture_category(category: &str) -> String {
    let value = category.split_once('/').map_or(category, |(_, v)| v);
    match value {
        "fast_food" => "fast_food_restaurant".into(),
        "cafe" => "coffee_shop".into(),
        "fuel" => "gas_station".into(),
        "convenience" => "convenience_store".into(),
        "charging_station" => "ev_charging_station".into(),
        "fitness_centre" => "gym".into(),
        "mobile_phone" => "mobile_phone_store".into(),
        "restaurant" | "pharmacy" | "bank" | "hotel" | "supermarket" => value.into(),
        v if category.starts_with("shop/") => format!("{v}_store"),
        v => v.into(),
    }
}

pub(super) fn overture_frame(o: OvertureColumns) -> PolarsResult<Vec<Column>> {
    let n = o.id.len();
    // A row without a brand has a null `brand` struct, as in Overture's files.
    let has_brand: Vec<bool> = o.brand_name.iter().map(|b| b.is_some()).collect();
    let brand =
        structs("brand", vec![structs("names", vec![opt_strs("primary", o.brand_name)], None), opt_strs("wikidata", o.brand_wikidata)], Some(has_brand));
    let addresses = singleton_lists(
        structs(
            "addresses",
            vec![
                opt_strs("freeform", o.freeform),
                opt_strs("locality", o.locality),
                opt_strs("postcode", o.postcode),
                opt_strs("region", o.region),
                opt_strs("country", o.country),
            ],
            None,
        ),
        None,
    );
    let sources = singleton_lists(
        structs(
            "sources",
            vec![strs("property", vec![String::new(); n]), strs("dataset", o.dataset), strs("record_id", o.record_id), strs("update_time", o.update_time)],
            None,
        ),
        None,
    );
    let has_phone: Vec<bool> = o.phone.iter().map(|p| p.is_some()).collect();
    let phones = singleton_lists(opt_strs("phones", o.phone), Some(has_phone));
    let bbox = structs("bbox", vec![numbers("xmin", o.xmin), numbers("xmax", o.xmax), numbers("ymin", o.ymin), numbers("ymax", o.ymax)], None);
    Ok(vec![
        strs("id", o.id),
        binaries("geometry", &o.geometry),
        bbox,
        numbers("version", vec![0i32; n]),
        sources,
        structs("names", vec![strs("primary", o.name)], None),
        structs("categories", vec![strs("primary", o.category)], None),
        numbers("confidence", o.confidence),
        phones,
        brand,
        addresses,
        strs("operating_status", o.status),
    ])
}
