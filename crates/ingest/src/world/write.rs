//! Writes sightings in each publisher's real format: OSM as an osmium GeoJSON sequence, ATP
//! as one FeatureCollection per spider, Overture and Foursquare as Parquet with their real
//! column names and nesting. The ground truth goes to a separate CSV the pipeline never reads.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;
use storemap_core::{format_iso, SourceType};

use super::brand::{BrandWorld, Sighting, TrueStore};
use super::BrandTruth;
use crate::catalog::{fnv1a, CatalogBrand};
use crate::error::{IngestError, Result};
use crate::reference::City;

pub struct SourceWriters {
    dir: PathBuf,
    osm: BufWriter<File>,
    truth: BufWriter<File>,
    /// `truth-brands.csv`: each brand's true stores per country beside its published count.
    brand_truth: csv::Writer<File>,
    spiders: HashSet<String>,
    overture: OvertureColumns,
    fsq: FsqColumns,
    next_osm_id: u64,
    seed: u64,
    as_of: i64,
    pub counts: [u64; 4],
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
    }
    let f = File::create(path).map_err(|e| IngestError::io(path.display(), e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

/// ATP's feature id: URL-safe base64 of SHA-1 over ref and spider name.
pub fn atp_feature_id(reference: &str, spider: &str) -> String {
    let digest = sha1_smol::Sha1::from(format!("{reference}{spider}")).digest().bytes();
    base64_url(&digest)
}

fn base64_url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex_id(seed: u64, tag: &str, key: &str, digits: usize) -> String {
    let a = fnv1a(format!("{seed}/{tag}/{key}").as_bytes());
    let b = fnv1a(format!("{key}/{tag}/{seed}").as_bytes());
    format!("{a:016x}{b:016x}")[..digits].to_string()
}

/// The GERS-style id Overture gives a store's row, and Foursquare's place id: derived from the
/// store, so a re-published row can name its origin.
fn overture_id(seed: u64, store_key: &str) -> String {
    hex_id(seed, "overture", store_key, 32)
}
fn fsq_id(seed: u64, store_key: &str) -> String {
    hex_id(seed, "fsq", store_key, 24)
}

fn spider_name(brand: &CatalogBrand, taken: &mut HashSet<String>) -> String {
    let slug: String = brand.name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let slug = slug.split('_').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("_");
    let mut name = if slug.is_empty() { brand.nsi_id.replace('-', "_") } else { slug };
    if taken.contains(&name) {
        name = format!("{name}_{}", brand.nsi_id.rsplit('-').next().unwrap_or("x"));
    }
    taken.insert(name.clone());
    name
}

#[derive(Serialize)]
struct OsmFeature<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    geometry: Point,
    properties: OsmProps<'a>,
}

#[derive(Serialize)]
struct Point {
    #[serde(rename = "type")]
    kind: &'static str,
    coordinates: [f64; 2],
}

#[derive(Serialize)]
struct OsmProps<'a> {
    #[serde(rename = "@type")]
    osm_type: &'static str,
    #[serde(rename = "@id")]
    id: u64,
    #[serde(flatten)]
    tags: Tags<'a>,
}

/// OSM-style tags, as both OSM and ATP write them.
#[derive(Serialize, Default)]
struct Tags<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    amenity: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shop: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tourism: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    leisure: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brand: Option<&'a str>,
    #[serde(rename = "brand:wikidata", skip_serializing_if = "Option::is_none")]
    brand_wikidata: Option<&'a str>,
    name: &'a str,
    #[serde(rename = "addr:housenumber", skip_serializing_if = "Option::is_none")]
    housenumber: Option<&'a str>,
    #[serde(rename = "addr:street", skip_serializing_if = "Option::is_none")]
    street: Option<&'a str>,
    #[serde(rename = "addr:city", skip_serializing_if = "Option::is_none")]
    city: Option<&'a str>,
    #[serde(rename = "addr:state", skip_serializing_if = "Option::is_none")]
    state: Option<&'a str>,
    #[serde(rename = "addr:postcode", skip_serializing_if = "Option::is_none")]
    postcode: Option<&'a str>,
    #[serde(rename = "addr:country", skip_serializing_if = "Option::is_none")]
    country: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phone: Option<&'a str>,
}

impl<'a> Tags<'a> {
    fn new(brand: &'a CatalogBrand, s: &'a Sighting, store: &'a TrueStore, city: &'a City) -> Tags<'a> {
        let (key, value) = brand.category.split_once('/').unwrap_or(("shop", "yes"));
        let addr = s.with_address;
        let (number, street) = split_address(&store.address);
        let mut t = Tags {
            brand: s.tag_brand.then_some(brand.name.as_str()),
            brand_wikidata: if s.tag_wikidata { brand.wikidata.as_deref() } else { None },
            name: &s.name,
            housenumber: if addr { number } else { None },
            street: if addr { Some(street) } else { None },
            city: addr.then_some(city.name.as_str()),
            state: (addr && !city.admin1.is_empty()).then_some(city.admin1.as_str()),
            postcode: (addr && !store.postcode.is_empty()).then_some(store.postcode.as_str()),
            country: s.with_country.then_some(store.country.as_str()),
            phone: (addr && !store.phone.is_empty()).then_some(store.phone.as_str()),
            ..Tags::default()
        };
        match key {
            "amenity" => t.amenity = Some(value),
            "tourism" => t.tourism = Some(value),
            "leisure" => t.leisure = Some(value),
            _ => t.shop = Some(value),
        }
        t
    }
}

/// "123 Main St" -> (Some("123"), "Main St"); addresses without a leading number stay whole.
fn split_address(a: &str) -> (Option<&str>, &str) {
    match a.split_once(' ') {
        Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => (Some(n), rest),
        _ => (None, a),
    }
}

#[derive(Default)]
struct OvertureColumns {
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

#[derive(Default)]
struct FsqColumns {
    id: Vec<String>,
    name: Vec<String>,
    lat: Vec<f64>,
    lng: Vec<f64>,
    address: Vec<Option<String>>,
    locality: Vec<Option<String>>,
    region: Vec<Option<String>>,
    postcode: Vec<Option<String>>,
    country: Vec<Option<String>>,
    tel: Vec<Option<String>>,
    created: Vec<String>,
    refreshed: Vec<String>,
    closed: Vec<Option<String>>,
    label: Vec<String>,
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

fn fsq_label(brand: &CatalogBrand) -> &'static str {
    match (brand.class.as_str(), brand.category.as_str()) {
        ("food", "amenity/fast_food") => "Dining and Drinking > Restaurant > Fast Food Restaurant",
        ("food", _) => "Dining and Drinking > Restaurant",
        ("coffee", _) => "Dining and Drinking > Cafe, Coffee, and Tea House > Coffee Shop",
        ("fuel", _) => "Travel and Transportation > Fuel Station",
        ("pharmacy", _) => "Health and Medicine > Pharmacy",
        ("supermarket", "shop/convenience") => "Retail > Convenience Store",
        ("supermarket", _) => "Retail > Food and Beverage Retail > Grocery Store / Supermarket",
        ("bank", _) => "Business and Professional Services > Financial Service > Banking and Finance > Bank",
        ("hotel", _) => "Travel and Transportation > Lodging > Hotel",
        ("ev", _) => "Travel and Transportation > Electric Vehicle Charging Station",
        ("fitness", _) => "Sports and Recreation > Gym and Studio",
        ("telecom", _) => "Retail > Mobile Phone Store",
        _ => "Retail",
    }
}

impl SourceWriters {
    pub fn new(dir: &Path, seed: u64, as_of: i64) -> Result<SourceWriters> {
        // A previous build's files (an ATP spider that no longer exists, say) must not leak
        // into this one: the folder is the generator's alone.
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| IngestError::io(dir.display(), e))?;
        }
        let mut osm = create(&dir.join("osm/places.geojsonseq"))?;
        osm.flush().map_err(|e| IngestError::io(dir.display(), e))?;
        std::fs::create_dir_all(dir.join("atp")).map_err(|e| IngestError::io(dir.display(), e))?;
        let mut truth = create(&dir.join("truth.csv"))?;
        writeln!(truth, "source,source_id,store,closed").map_err(|e| IngestError::io("truth.csv", e))?;
        let path = dir.join(super::BRAND_TRUTH_FILE);
        let brand_truth = csv::Writer::from_path(&path).map_err(|e| IngestError::file(path.display(), e))?;
        Ok(SourceWriters {
            dir: dir.to_path_buf(),
            osm,
            truth,
            brand_truth,
            spiders: HashSet::new(),
            overture: OvertureColumns::default(),
            fsq: FsqColumns::default(),
            next_osm_id: 1_000_000_000,
            seed,
            as_of,
            counts: [0; 4],
        })
    }

    pub fn write_brand(&mut self, brand: &CatalogBrand, world: &BrandWorld, cities: &[City]) -> Result<()> {
        let io = |e| IngestError::io("sources", e);
        let mut by_country: std::collections::BTreeMap<&str, (u64, u64)> = std::collections::BTreeMap::new();
        for s in &world.stores {
            let e = by_country.entry(s.country.as_str()).or_default();
            e.0 += 1;
            e.1 += u64::from(!s.closed);
        }
        for (country, (stores, open)) in by_country {
            let row = BrandTruth {
                brand: brand.name.clone(),
                wikidata: brand.wikidata.clone().unwrap_or_default(),
                country: country.to_string(),
                stores,
                open,
                published: brand.footprint.iter().find(|(c, _)| c == country).map(|(_, n)| *n),
                real: brand.known_stores,
            };
            self.brand_truth.serialize(row).map_err(|e| IngestError::file("truth-brands.csv", e))?;
        }
        let spider = if world.sightings.iter().any(|s| s.source == SourceType::Atp) { Some(spider_name(brand, &mut self.spiders)) } else { None };
        let mut atp_features: Vec<serde_json::Value> = Vec::new();
        for s in &world.sightings {
            let store = &world.stores[s.store as usize];
            let city = &cities[store.city as usize];
            let store_key = format!("{}#{}", brand.nsi_id, store.number);
            let seen = format_iso(self.as_of - s.days_ago as i64 * 86_400);
            let source_id = match s.source {
                SourceType::Osm => {
                    self.next_osm_id += 1;
                    let f = OsmFeature {
                        kind: "Feature",
                        geometry: Point { kind: "Point", coordinates: [round7(s.lng), round7(s.lat)] },
                        properties: OsmProps { osm_type: "node", id: self.next_osm_id, tags: Tags::new(brand, s, store, city) },
                    };
                    self.osm.write_all(b"\x1e").map_err(io)?;
                    serde_json::to_writer(&mut self.osm, &f).map_err(|e| IngestError::Invalid(e.to_string()))?;
                    self.osm.write_all(b"\n").map_err(io)?;
                    format!("n{}", self.next_osm_id)
                }
                SourceType::Atp => {
                    let spider = spider.as_deref().unwrap_or_default();
                    let reference = store.number.to_string();
                    let id = atp_feature_id(&reference, spider);
                    let mut props = serde_json::to_value(Tags::new(brand, s, store, city)).unwrap_or_default();
                    if let Some(p) = props.as_object_mut() {
                        p.insert("ref".into(), reference.clone().into());
                        p.insert("@spider".into(), spider.into());
                        p.insert("branch".into(), city.name.clone().into());
                        if s.closed_marker {
                            p.insert("end_date".into(), format_iso(self.as_of - 30 * 86_400)[..10].into());
                        }
                    }
                    atp_features.push(serde_json::json!({
                        "type": "Feature", "id": id, "properties": props,
                        "geometry": {"type": "Point", "coordinates": [round7(s.lng), round7(s.lat)]}
                    }));
                    id
                }
                SourceType::Overture => {
                    let o = &mut self.overture;
                    let id = overture_id(self.seed, &store_key);
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
                    o.freeform.push(addr.then(|| store.address.clone()));
                    o.locality.push(addr.then(|| city.name.clone()));
                    o.postcode.push((addr && !store.postcode.is_empty()).then(|| store.postcode.clone()));
                    o.region.push((addr && !city.admin1.is_empty()).then(|| format!("{}-{}", store.country, city.admin1)));
                    o.country.push(s.with_country.then(|| store.country.clone()));
                    o.phone.push((!store.phone.is_empty()).then(|| store.phone.replace([' ', '-'], "")));
                    let (dataset, record) = match s.derived {
                        Some(SourceType::Atp) => ("AllThePlaces", atp_feature_id(&store.number.to_string(), spider.as_deref().unwrap_or_default())),
                        Some(SourceType::Fsq) => ("Foursquare", fsq_id(self.seed, &store_key)),
                        _ => ("meta", hex_id(self.seed, "meta", &store_key, 15)),
                    };
                    o.dataset.push(dataset.into());
                    o.record_id.push(record);
                    o.update_time.push(seen.clone());
                    o.status.push(if s.closed_marker { "permanently_closed" } else { "open" }.into());
                    id
                }
                SourceType::Fsq => {
                    let f = &mut self.fsq;
                    let id = fsq_id(self.seed, &store_key);
                    f.id.push(id.clone());
                    f.name.push(s.name.clone());
                    f.lat.push(round6(s.lat));
                    f.lng.push(round6(s.lng));
                    let addr = s.with_address;
                    f.address.push(addr.then(|| store.address.clone()));
                    f.locality.push(addr.then(|| city.name.clone()));
                    f.region.push((addr && !city.admin1.is_empty()).then(|| city.admin1.clone()));
                    f.postcode.push((addr && !store.postcode.is_empty()).then(|| store.postcode.clone()));
                    f.country.push(s.with_country.then(|| store.country.clone()));
                    f.tel.push((!store.phone.is_empty()).then(|| store.phone.clone()));
                    f.created.push(format_iso(self.as_of - 3 * 365 * 86_400)[..10].into());
                    f.refreshed.push(seen[..10].into());
                    f.closed.push(s.closed_marker.then(|| format_iso(self.as_of - 30 * 86_400)[..10].to_string()));
                    f.label.push(fsq_label(brand).into());
                    id
                }
            };
            self.counts[s.source as usize] += 1;
            writeln!(self.truth, "{},{},{},{}", s.source.as_str(), source_id, store_key, store.closed).map_err(io)?;
        }
        if let Some(spider) = spider {
            let coll = serde_json::json!({
                "type": "FeatureCollection",
                "dataset_attributes": {
                    "@spider": spider,
                    "spider:collection_time": format_iso(self.as_of - 2 * 86_400),
                    "spider:lineage": "S_ATP_BRANDS",
                    "license": "CC0-1.0",
                },
                "features": atp_features,
            });
            let mut w = create(&self.dir.join(format!("atp/{spider}.geojson")))?;
            serde_json::to_writer(&mut w, &coll).map_err(|e| IngestError::Invalid(e.to_string()))?;
            w.flush().map_err(io)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<[u64; 4]> {
        let io = |e| IngestError::io("sources", e);
        self.osm.flush().map_err(io)?;
        self.truth.flush().map_err(io)?;
        self.brand_truth.flush().map_err(io)?;
        let o = std::mem::take(&mut self.overture);
        write_parquet(&self.dir.join("overture/places.parquet"), overture_frame(o))?;
        let f = std::mem::take(&mut self.fsq);
        write_parquet(&self.dir.join("fsq/places.parquet"), fsq_frame(f))?;
        Ok(self.counts)
    }
}

fn round7(v: f64) -> f64 {
    (v * 1e7).round() / 1e7
}
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn write_parquet(path: &Path, df: PolarsResult<DataFrame>) -> Result<()> {
    let name = path.display().to_string();
    let mut df = df.map_err(|e| IngestError::file(&name, e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
    }
    let file = File::create(path).map_err(|e| IngestError::io(&name, e))?;
    ParquetWriter::new(file).with_compression(ParquetCompression::Snappy).finish(&mut df).map_err(|e| IngestError::file(&name, e))?;
    Ok(())
}

fn strs(name: &str, v: Vec<String>) -> Series {
    Series::new(name.into(), v)
}
fn opt_strs(name: &str, v: Vec<Option<String>>) -> Series {
    Series::new(name.into(), v)
}
fn structs(name: &str, fields: &[Series]) -> PolarsResult<Series> {
    let len = fields.first().map_or(0, |f| f.len());
    Ok(StructChunked::from_series(name.into(), len, fields.iter())?.into_series())
}
/// Each row's value as a one-element list (every generated row has exactly one address,
/// one source record and one category label).
fn singleton_lists(s: Series) -> PolarsResult<Series> {
    s.reshape_list(&[ReshapeDimension::new(-1), ReshapeDimension::new(1)])
}

fn overture_frame(o: OvertureColumns) -> PolarsResult<DataFrame> {
    let n = o.id.len();
    let names = structs("names", &[strs("primary", o.name)])?;
    let brand_names = structs("names", &[opt_strs("primary", o.brand_name.clone())])?;
    let has_brand: Vec<bool> = o.brand_name.iter().map(|b| b.is_some()).collect();
    let brand = structs("brand", &[brand_names, opt_strs("wikidata", o.brand_wikidata)])?;
    // A row without a brand has a null `brand` struct, as in Overture's files.
    let brand = brand.zip_with(&BooleanChunked::new("m".into(), &has_brand), &Series::full_null("brand".into(), n, brand.dtype()))?;
    let addresses = singleton_lists(structs(
        "addresses",
        &[
            opt_strs("freeform", o.freeform),
            opt_strs("locality", o.locality),
            opt_strs("postcode", o.postcode),
            opt_strs("region", o.region),
            opt_strs("country", o.country),
        ],
    )?)?;
    let sources = singleton_lists(structs(
        "sources",
        &[strs("property", vec![String::new(); n]), strs("dataset", o.dataset), strs("record_id", o.record_id), strs("update_time", o.update_time)],
    )?)?;
    let phones: Series =
        o.phone.iter().map(|p| p.as_ref().map(|p| Series::new("".into(), [p.as_str()]))).collect::<ListChunked>().with_name("phones".into()).into_series();
    let bbox = structs(
        "bbox",
        &[Series::new("xmin".into(), o.xmin), Series::new("xmax".into(), o.xmax), Series::new("ymin".into(), o.ymin), Series::new("ymax".into(), o.ymax)],
    )?;
    DataFrame::new(
        n,
        vec![
            strs("id", o.id).into(),
            Series::new("geometry".into(), o.geometry.iter().map(|g| g.as_slice()).collect::<Vec<&[u8]>>()).into(),
            bbox.into(),
            Series::new("version".into(), vec![0i32; n]).into(),
            sources.into(),
            names.into(),
            structs("categories", &[strs("primary", o.category)])?.into(),
            Series::new("confidence".into(), o.confidence).into(),
            phones.into(),
            brand.into(),
            addresses.into(),
            strs("operating_status", o.status).into(),
        ],
    )
}

fn fsq_frame(f: FsqColumns) -> PolarsResult<DataFrame> {
    let n = f.id.len();
    DataFrame::new(
        n,
        vec![
            strs("fsq_place_id", f.id).into(),
            strs("name", f.name).into(),
            Series::new("latitude".into(), f.lat).into(),
            Series::new("longitude".into(), f.lng).into(),
            opt_strs("address", f.address).into(),
            opt_strs("locality", f.locality).into(),
            opt_strs("region", f.region).into(),
            opt_strs("postcode", f.postcode).into(),
            opt_strs("country", f.country).into(),
            strs("date_created", f.created).into(),
            strs("date_refreshed", f.refreshed).into(),
            opt_strs("date_closed", f.closed).into(),
            opt_strs("tel", f.tel).into(),
            singleton_lists(strs("fsq_category_labels", f.label))?.into(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atp_ids_match_the_exporter() {
        // The fixture generator computed this id for ref 195500290142 of spider mcdonalds_us
        // the way ATP's exporter does.
        assert_eq!(atp_feature_id("195500290142", "mcdonalds_us"), "n0WRrRis-MCpv4YfeGQFEl8NyEo=");
        assert_eq!(base64_url(b"\xfb\xff"), "-_8=");
    }
}
