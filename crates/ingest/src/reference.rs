//! Reference data: what `ts/data/reference.ts` extracts from the npm packages (NSI brands,
//! GeoNames cities, Natural Earth countries, US ZIPs) and the project's own tables in `data/`
//! (tickers, categories in scope, curated misspellings, real footprints, AllThePlaces presence).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{IngestError, Result};

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct NsiBrand {
    pub nsi_id: String,
    pub name: String,
    pub wikidata: Option<String>,
    pub category: String,
    pub countries: Vec<String>,
    #[serde(default)]
    pub match_names: Vec<String>,
    #[serde(default)]
    pub names: BTreeMap<String, String>,
    /// How often OpenStreetMap tags this item's names in its category (NSI's tally; 0 below
    /// its threshold of 50).
    #[serde(default)]
    pub osm_count: u32,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct City {
    pub geonames_id: u64,
    pub name: String,
    pub country: String,
    pub admin1: String,
    pub population: u64,
    pub lat: f64,
    pub lng: f64,
    /// The city this place is a district of, as an address there names it (GeoNames lists
    /// cities' sections as places of their own: Neukölln is Berlin's); empty for a place of its
    /// own. The reference builder finds it; a reference written before it has none.
    #[serde(default)]
    pub town: String,
    /// GeoNames' English name where `name` is the local one (Munich beside München); empty
    /// otherwise, and in a reference written before it.
    #[serde(default)]
    pub also: String,
}

#[cfg(test)]
impl City {
    /// A place of its own (no district's city, no second name) of 1,000 people, for tests.
    pub(crate) fn place(name: &str, country: &str, admin1: &str, lat: f64, lng: f64) -> City {
        City {
            geonames_id: 0,
            name: name.into(),
            country: country.into(),
            admin1: admin1.into(),
            population: 1000,
            lat,
            lng,
            town: String::new(),
            also: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Zip {
    pub zip: String,
    pub lat: f64,
    pub lng: f64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Ticker {
    pub ticker: String,
    pub exchange: String,
    pub brand: String,
    pub wikidata: String,
    pub company: String,
    /// Approximate storefronts of the primary brand worldwide (public figures).
    #[serde(default)]
    pub stores: u32,
    #[serde(default)]
    pub portfolio: String,
}

impl Ticker {
    /// The country of the exchange the ticker is listed on: the company's home, as a rule.
    /// `tickers.csv` files a cross-listed company under its home exchange where the symbol is
    /// the same there (BNS on the TSX, TTE on Euronext Paris); an American depositary symbol
    /// like BP's is the exception, and `home-cities.csv` and `world-totals.csv` name the real
    /// home and come first (see `CatalogBrand::home_country`).
    pub fn listing_country(&self) -> Option<&'static str> {
        Some(match self.exchange.as_str() {
            "NYSE" | "NASDAQ" => "US",
            "TSX" => "CA",
            "LSE" => "GB",
            "TSE" => "JP",
            "Euronext Paris" => "FR",
            "Euronext Amsterdam" => "NL",
            "Euronext Lisbon" => "PT",
            "XETRA" => "DE",
            "BME" => "ES",
            "ASX" => "AU",
            "Nasdaq Stockholm" => "SE",
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct CategoryScope {
    pub category: String,
    pub class: String,
    pub storefront_type: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Misspelling {
    pub misspelling: String,
    pub brand: String,
}

/// Joins the countries of a footprint row that counts several together (`GB+IE`: Next's 458
/// shops in Britain and Ireland, the only figure it publishes for Britain).
pub const GROUP_SEPARATOR: char = '+';

/// One row of `data/footprints.csv`: a chain's published store count in one country, or in
/// several together (`GB+IE`, where that is all its company publishes). A count of 0 records a
/// market the chain has left or never entered.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct FootprintRow {
    pub brand: String,
    /// Empty where the figure covers several banners or the id could not be checked: such a
    /// row documents a figure but places no stores.
    #[serde(default)]
    pub brand_wikidata: String,
    #[serde(deserialize_with = "footprint_place")]
    pub country: String,
    pub count: u32,
}

/// An ISO 3166-1 code, or several different ones joined by `+`: an operator's typo (`gb`,
/// `GB+`) is refused with its row rather than read as a country nobody trades in.
fn footprint_place<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let place = String::deserialize(d)?;
    let codes: Vec<&str> = place.split(GROUP_SEPARATOR).collect();
    let well_formed = codes.iter().all(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()));
    let distinct = codes.iter().collect::<std::collections::BTreeSet<_>>().len() == codes.len();
    if well_formed && distinct {
        Ok(place)
    } else {
        Err(serde::de::Error::custom(format!("country {place:?} is not an ISO 3166-1 code nor several different ones joined by '+'")))
    }
}

/// One row of `data/osm-coverage.csv` (isOsmComplete): a chain's official store count beside
/// its count in OpenStreetMap, in one country or `Worldwide`. Some rows name two ids
/// (`Q11247682;Q1191685`), the index's and Wikidata's for one chain.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsmCoverageRow {
    pub name: String,
    pub brand_wikidata: String,
    pub country: String,
    pub official_count: u32,
    pub osm_count: u32,
}

/// One row of `data/world-totals.csv`: a chain's published store count worldwide, and the
/// country its company is run from. A total across a group's banners has no id.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WorldTotalRow {
    pub brand: String,
    #[serde(default)]
    pub brand_wikidata: String,
    pub home: String,
    pub world_total: u32,
}

/// One row of the reference's `regions.csv`: a country's market region (its UN M49 region, the
/// Americas split into Northern America and Latin America and the Caribbean).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RegionRow {
    pub country: String,
    pub region: String,
}

/// One row of `data/brand-homes.csv`: the country a brand whose location sets name several
/// countries trades most in, from its Wikidata description (`scripts/brand_homes.py`) or read
/// elsewhere.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct BrandHomeRow {
    pub brand_wikidata: String,
    pub country: String,
}

/// One row of `data/atp-presence.csv`: a brand AllThePlaces has a spider for, and the countries
/// it has a country-specific spider in (none when its only spiders span several countries).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct AtpPresence {
    pub brand_wikidata: String,
    /// Space-separated ISO 3166-1 codes.
    pub countries: String,
    /// Every spider of the brand is country-specific: the list is the brand's whole footprint
    /// as far as AllThePlaces knows it (a multi-country spider's countries are not recorded).
    pub complete: bool,
}

/// Where the two kinds of reference data live.
#[derive(Debug, Clone)]
pub struct ReferencePaths {
    /// Extracted from npm packages (brands.jsonl, cities.csv, countries.geojson, zips.csv,
    /// regions.csv).
    pub extracted: PathBuf,
    /// The project's `data/` folder (tickers.csv, categories.csv, misspellings.csv).
    pub tables: PathBuf,
}

pub fn read_csv<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let name = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| IngestError::file(&name, e))?;
    r.deserialize().enumerate().map(|(i, rec)| rec.map_err(|e| IngestError::file(&name, format!("row {}: {e}", i + 1)))).collect()
}

pub fn read_brands(path: &Path) -> Result<Vec<NsiBrand>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| IngestError::io(&name, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| IngestError::file(&name, format!("line {}: {e}", i + 1))))
        .collect()
}

pub fn read_json(path: &Path) -> Result<serde_json::Value> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| IngestError::io(&name, e))?;
    serde_json::from_slice(&bytes).map_err(|e| IngestError::file(&name, e))
}
