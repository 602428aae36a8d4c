//! The brand catalog: NSI items merged into brands (one per wikidata id), kept when one of
//! their categories is in scope (`data/categories.csv`), ranked, given unique canonical names,
//! and able to say which brand a source row belongs to.

use std::collections::{BTreeMap, HashMap, HashSet};

use storemap_core::{name_keys, BrandRecord, SourceType, StorefrontType, TickerRecord};

use crate::countries::CountryIndex;
use crate::footprint::{Footprint, Footprints, HomeCity, WORLDWIDE_SET};
use crate::hash::fnv1a;
use crate::import::PLACE_KEYS;
use crate::reference::{CategoryScope, Misspelling, NsiBrand, RegionRow, Ticker};
use crate::{Skip, SourceRow};

#[derive(Debug, Clone)]
pub struct CatalogBrand {
    pub name: String,
    pub wikidata: Option<String>,
    pub nsi_id: String,
    /// The first in-scope NSI category, e.g. `amenity/fast_food`.
    pub category: String,
    /// Every in-scope category of its NSI entries (7-Eleven: fuel and convenience).
    pub categories: Vec<String>,
    /// The contract's storefront class: food, coffee, fuel, retail, pharmacy, supermarket,
    /// bank, hotel, ev, fitness, telecom.
    pub class: String,
    pub default_storefront: StorefrontType,
    pub countries: Vec<String>,
    pub alt_names: Vec<String>,
    pub ticker: Option<String>,
    /// The brand's real store count: the ticker table's figure, its world total
    /// (`data/world-totals.csv`) or the sum of its published counts per country, whichever is
    /// larger.
    pub known_stores: Option<u32>,
    /// Whether the chain's size is known beyond the table's rows (a ticker's figure or a world
    /// total). Without it, `known_stores` is only the sum of the rows, which leaves out every
    /// market nobody found a figure for.
    pub listed: bool,
    /// Published store counts per country (`data/footprints.csv`), largest first.
    pub footprint: Vec<(String, u32)>,
    /// Published counts for several countries together, over the members without their own
    /// (see [`Footprint::groups`]).
    pub footprint_groups: Vec<(Vec<String>, u32)>,
    /// AllThePlaces has a spider for it (`data/atp-presence.csv`).
    pub spidered: bool,
    /// The word its small stores add to its name (Tesco Express, Sainsbury's Local, Big C
    /// Mini), where it has small stores: see [`small_format_word`].
    pub small_format: Option<&'static str>,
    /// The countries AllThePlaces has a spider of its own for the chain in.
    pub scraped: Vec<String>,
    /// `scraped` is every country AllThePlaces harvests it in ([`Footprint::scraped_is_all`]).
    pub scraped_is_all: bool,
    /// Where the rest of its stores may go (see [`Footprint::trade_countries`]).
    pub trade: Vec<String>,
    /// Countries it has no stores in.
    pub absent: Vec<String>,
    /// The city the chain is densest around, if known.
    pub home: Option<HomeCity>,
    /// The share of the chain OpenStreetMap maps, by country (`""`: worldwide), where
    /// `data/osm-coverage.csv` measures it.
    pub osm_share: Vec<(String, f64)>,
    /// Its home market: its home city's country, else the company's country `world-totals.csv`
    /// names, else `brand-homes.csv`'s (the country of origin, or the biggest market where a
    /// curated row says it is another: Mister Donut's Japan), else its ticker's exchange's.
    pub home_country: Option<String>,
    /// How often OpenStreetMap tags its in-scope entries' names: what ranks a brand without a
    /// known size.
    pub osm_count: u32,
}

impl CatalogBrand {
    /// Whether AllThePlaces harvests the chain in `country`: `Some(true)` where a spider of that
    /// country names it, `Some(false)` where every spider naming it is another country's,
    /// `None` where a spider of several countries (McDonald's, Shell) may reach it.
    pub fn scraped_in(&self, country: &str) -> Option<bool> {
        match self.scraped.iter().any(|c| c == country) {
            true => Some(true),
            false if self.scraped_is_all => Some(false),
            false => None,
        }
    }

    /// The share of the chain OpenStreetMap maps in `country`, else worldwide, where measured.
    pub fn osm_share_in(&self, country: &str) -> Option<f64> {
        let find = |c: &str| self.osm_share.iter().find(|(k, _)| k == c).map(|(_, s)| *s);
        find(country).or_else(|| find(""))
    }
}

#[derive(Debug)]
pub struct Catalog {
    /// In rank order: index 0 is the brand with the widest footprint.
    pub brands: Vec<CatalogBrand>,
    pub tickers: Vec<TickerRecord>,
    by_wikidata: HashMap<String, u32>,
    by_key: HashMap<String, Vec<u32>>,
    scope: HashMap<String, (String, StorefrontType)>,
    /// Each country's market region (the reference's `regions.csv`): where a chain goes first
    /// beyond its home.
    pub market_regions: HashMap<String, String>,
}

/// The words a chain's small-store format adds to its name, in the order they are looked for.
/// `reconcile::storefront_type` reads each of them as a small format.
const SMALL_FORMAT_WORDS: [&str; 4] = ["Express", "Local", "Mini", "Metro"];

/// The word a brand's small stores are named with: the one the name-suggestion index names a
/// format of the same brand (same Wikidata item) with ("Walmart Express", "Big C Mini",
/// "Nisa Local"), else "Express" for fast food (McDonald's, KFC and Burger King all run
/// "Express" counters); other brands have no small format (no "IKEA Express", "H&M Local").
/// A format with a Wikidata item of its own (Tesco Express, Carrefour Express) is a brand of
/// its own in the catalog, with its own stores.
fn small_format_word(store_name: &str, class: &str, group_names: &HashSet<&str>) -> Option<&'static str> {
    SMALL_FORMAT_WORDS.into_iter().find(|w| group_names.contains(format!("{store_name} {w}").as_str())).or((class == "food").then_some("Express"))
}

/// A brand's name as its storefronts show it: NSI's disambiguating qualifier dropped
/// ("Target (USA)" -> "Target", "BMO (Canada)" -> "BMO").
pub fn store_name(display: &str) -> &str {
    match display.find(" (") {
        Some(i) if display.ends_with(')') && i > 0 => &display[..i],
        _ => display,
    }
}

impl Catalog {
    /// Adds the countries' market regions.
    pub fn with_market_regions(mut self, rows: &[RegionRow]) -> Catalog {
        self.market_regions = rows.iter().map(|r| (r.country.clone(), r.region.clone())).collect();
        self
    }

    pub fn build(nsi: &[NsiBrand], scope: &[CategoryScope], tickers: &[Ticker], misspellings: &[Misspelling], footprints: &Footprints) -> Catalog {
        let scope: HashMap<String, (String, StorefrontType)> = scope
            .iter()
            .map(|c| (c.category.clone(), (c.class.clone(), StorefrontType::parse(&c.storefront_type).unwrap_or(StorefrontType::FullRetail))))
            .collect();

        // Group NSI items by brand identity: the wikidata id, else the NSI id.
        let mut groups: BTreeMap<String, Vec<&NsiBrand>> = BTreeMap::new();
        for b in nsi {
            groups.entry(b.wikidata.clone().unwrap_or_else(|| format!("nsi:{}", b.nsi_id))).or_default().push(b);
        }

        let ticker_of: HashMap<&str, &Ticker> = tickers.iter().map(|t| (t.wikidata.as_str(), t)).collect();
        let mut brands: Vec<CatalogBrand> = Vec::new();
        for items in groups.values() {
            // NSI splits a brand into regional entries under one wikidata id ("麥當勞
            // McDonald's" for Hong Kong, "スターバックス" for Japan): the entry covering the most
            // countries carries the brand's own name.
            // The ticker table's curated name wins where it names one of the entries.
            let curated = items.first().and_then(|b| b.wikidata.as_deref()).and_then(|q| ticker_of.get(q)).map(|t| t.brand.as_str());
            let Some(widest) = items
                .iter()
                .filter(|b| scope.contains_key(&b.category))
                .min_by_key(|b| (Some(b.name.as_str()) != curated, std::cmp::Reverse(b.countries.len()), b.name.len(), b.nsi_id.clone()))
            else {
                continue;
            };
            // A format's entry ("Pizza Hut Express", 250 countries) may be listed as widely as
            // the brand's own ("Pizza Hut", 246): an entry named as the first words of the
            // widest, listed in nine tenths of its countries, is the brand's.
            let main = if Some(widest.name.as_str()) == curated {
                widest
            } else {
                items
                    .iter()
                    .filter(|b| scope.contains_key(&b.category) && b.countries.len() * 10 >= widest.countries.len() * 9)
                    .filter(|b| widest.name.strip_prefix(b.name.as_str()).is_some_and(|rest| rest.starts_with(' ')))
                    .min_by_key(|b| b.name.len())
                    .unwrap_or(widest)
            };
            let (class, storefront) = scope[&main.category].clone();
            let union = |narrow_only: bool| {
                let mut v: Vec<String> =
                    items.iter().filter(|b| !narrow_only || b.countries.len() < WORLDWIDE_SET).flat_map(|b| b.countries.iter().cloned()).collect();
                v.sort();
                v.dedup();
                v
            };
            let countries = union(false);
            let mut alt_names: Vec<String> = Vec::new();
            for b in items {
                alt_names.push(b.name.clone());
                alt_names.extend(b.match_names.iter().cloned());
                alt_names.extend(b.names.values().cloned());
            }
            // NSI qualifies namesakes in parentheses ("Target (USA)"); storefronts say "Target".
            alt_names.push(store_name(&main.name).to_string());
            alt_names.retain(|n| n != &main.name);
            alt_names.sort();
            alt_names.dedup();
            let none = Footprint::default();
            let fp = main.wikidata.as_deref().and_then(|q| footprints.get(q)).unwrap_or(&none);
            // A chain's size from outside the table's rows: its ticker's figure or its sourced
            // world total, the larger (Mixue, with no ticker, is 53,014 stores, not only the
            // sum of its three rows).
            let listed = main.wikidata.as_deref().and_then(|q| ticker_of.get(q)).map_or(0, |t| t.stores).max(fp.world_total.unwrap_or(0));
            let known = listed.max(u32::try_from(fp.published_total()).unwrap_or(u32::MAX));
            let home_country = fp
                .named_home()
                .map(str::to_string)
                .or_else(|| main.wikidata.as_deref().and_then(|q| ticker_of.get(q)).and_then(|t| t.listing_country()).map(str::to_string));
            brands.push(CatalogBrand {
                small_format: small_format_word(
                    store_name(&main.name),
                    &class,
                    &items.iter().filter(|b| scope.contains_key(&b.category)).map(|b| b.name.as_str()).collect(),
                ),
                trade: fp.trade_countries(&countries, &union(true), home_country.as_deref()),
                categories: {
                    let mut c: Vec<String> = items.iter().filter(|b| scope.contains_key(&b.category)).map(|b| b.category.clone()).collect();
                    c.sort();
                    c.dedup();
                    c
                },
                footprint: fp.counts.clone(),
                footprint_groups: fp.groups.clone(),
                spidered: fp.spidered,
                scraped: fp.scraped.clone(),
                scraped_is_all: fp.scraped_is_all(),
                absent: fp.absent.clone(),
                home: fp.home.clone(),
                osm_share: fp.osm_share.clone(),
                home_country,
                osm_count: items.iter().filter(|b| scope.contains_key(&b.category)).map(|b| b.osm_count).sum(),
                known_stores: (known > 0).then_some(known),
                listed: listed > 0,
                name: main.name.clone(),
                wikidata: main.wikidata.clone(),
                nsi_id: main.nsi_id.clone(),
                category: main.category.clone(),
                class,
                default_storefront: storefront,
                countries,
                alt_names,
                ticker: main.wikidata.as_deref().and_then(|q| ticker_of.get(q)).map(|t| t.ticker.clone()),
            });
        }

        // Rank: brands with a known size (listed or with published counts) first, biggest first;
        // then by how often OpenStreetMap has their storefronts, since the width of a location
        // set says nothing of size (a fashion house listed worldwide has a few dozen shops);
        // then by how many countries the brand trades in; a fixed hash breaks ties without
        // favouring the alphabet.
        brands.sort_by_key(|b| {
            (std::cmp::Reverse(b.known_stores.unwrap_or(0)), std::cmp::Reverse(b.osm_count), std::cmp::Reverse(b.countries.len()), fnv1a(b.nsi_id.as_bytes()))
        });

        for m in misspellings {
            if let Some(b) = brands.iter_mut().find(|b| b.name == m.brand) {
                b.alt_names.push(m.misspelling.clone());
            }
        }

        // Canonical names must be unique: a smaller namesake gets its main country appended.
        let mut taken: HashMap<String, u32> = HashMap::new();
        for b in brands.iter_mut() {
            let mut name = b.name.clone();
            let key = |n: &str| name_keys(n).into_iter().next().unwrap_or_default();
            if taken.contains_key(&key(&name)) {
                let country = b.countries.first().cloned().unwrap_or_default();
                name = format!("{} ({})", b.name, country);
                if taken.contains_key(&key(&name)) {
                    name = format!("{} ({})", b.name, b.wikidata.as_deref().unwrap_or(&b.nsi_id));
                }
                b.alt_names.push(b.name.clone());
            }
            taken.insert(key(&name), 0);
            b.name = name;
        }

        let mut by_wikidata = HashMap::new();
        let mut by_key: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, b) in brands.iter().enumerate() {
            if let Some(q) = &b.wikidata {
                by_wikidata.insert(q.clone(), i as u32);
            }
            for n in std::iter::once(&b.name).chain(b.alt_names.iter()) {
                if let Some(k) = name_keys(n).into_iter().next() {
                    let v = by_key.entry(k).or_default();
                    if !v.contains(&(i as u32)) {
                        v.push(i as u32);
                    }
                }
            }
        }

        let mut ticker_records = Vec::new();
        for t in tickers {
            let brand = by_wikidata.get(&t.wikidata).copied().or_else(|| brands.iter().position(|b| b.name == t.brand).map(|i| i as u32));
            if let Some(brand) = brand {
                ticker_records.push(TickerRecord {
                    ticker: t.ticker.clone(),
                    exchange: t.exchange.clone(),
                    brand,
                    company: t.company.clone(),
                    portfolio: t.portfolio.split('|').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect(),
                });
            }
        }

        Catalog { brands, tickers: ticker_records, by_wikidata, by_key, scope, market_regions: HashMap::new() }
    }

    pub fn brand_records(&self) -> Vec<BrandRecord> {
        self.brands
            .iter()
            .map(|b| {
                let mut r = BrandRecord::new(b.name.clone());
                r.wikidata = b.wikidata.clone();
                r.nsi_id = Some(b.nsi_id.clone());
                r.category = Some(b.category.clone());
                r.alt_names = b.alt_names.clone();
                r
            })
            .collect()
    }

    /// The storefront class a source's category string implies, if any. Tag categories come
    /// from the scope table; Overture categories and Foursquare label paths by keyword.
    pub fn class_of(&self, category: &str) -> Option<&str> {
        if let Some((class, _)) = self.scope.get(category) {
            return Some(class.as_str());
        }
        let c = category.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| c.contains(w));
        // Tea rooms and tea shops are the coffee class's too.
        Some(if has(&["coffee", "cafe", "café", "tea house", "tea_room", "tea_", "tea store", "tea shop"]) {
            "coffee"
        } else if has(&[
            "fast_food",
            "fast food",
            "restaurant",
            "bakery",
            "ice cream",
            "ice_cream",
            "pizza",
            "burger",
            "donut",
            "pastry",
            "confectionery",
            "chocolate",
            "deli",
            "cookie",
            "dessert",
        ]) {
            "food"
        } else if has(&["fuel", "gas station", "gas_station", "petrol"]) {
            "fuel"
        } else if has(&["pharmacy", "drugstore", "chemist"]) {
            "pharmacy"
        } else if has(&["supermarket", "grocery", "convenience"]) {
            "supermarket"
        } else if has(&["bank", "credit union", "credit_union"]) && !c.contains("food bank") {
            "bank"
        } else if has(&["hotel", "motel", "hostel", "lodging"]) {
            "hotel"
        } else if has(&["charging"]) {
            "ev"
        } else if has(&["fitness", "gym"]) {
            "fitness"
        } else if has(&["mobile phone", "mobile_phone", "telecom"]) {
            "telecom"
        } else if has(&["shop", "store", "retail"]) {
            "retail"
        } else {
            return None;
        })
    }

    fn compatible(brand_class: &str, row_class: Option<&str>) -> bool {
        match row_class {
            None => true,
            Some(c) if c == brand_class => true,
            Some(c) => matches!(
                (brand_class, c),
                ("food", "coffee") | ("coffee", "food") | ("supermarket", "retail") | ("retail", "supermarket") | ("retail", "telecom") | ("telecom", "retail")
            ),
        }
    }

    /// Which brand a row belongs to: its wikidata id when it carries one, else its brand tag,
    /// else its name (Foursquare has no brand column), and for name matches only when the
    /// row's category fits the brand's class.
    pub fn match_row(&self, row: &SourceRow, countries: &CountryIndex) -> Option<u32> {
        if let Some(q) = &row.brand_wikidata {
            if let Some(&b) = self.by_wikidata.get(q) {
                return Some(b);
            }
        }
        let row_class = row.category.as_deref().and_then(|c| self.class_of(c));
        // Only a name several brands share needs the row's country, and locating is the costly
        // part: it is looked up once, when first needed.
        let here = std::cell::OnceCell::new();
        let country = || *here.get_or_init(|| row.country.as_deref().or_else(|| countries.locate(row.lat, row.lng)));
        let pick = |name: &str, need_class: bool| -> Option<u32> {
            let key = name_keys(name).into_iter().next()?;
            let cands = self.by_key.get(&key)?;
            let fits: Vec<u32> = cands.iter().copied().filter(|&b| Self::compatible(&self.brands[b as usize].class, row_class)).collect();
            match fits.as_slice() {
                [] if need_class => None,
                [] => cands.first().copied(),
                [only] => Some(*only),
                // Namesakes ("BBVA" in Spain is BBVA, not the US bank that bought BBVA USA):
                // the biggest one that trades where the row is, else the biggest.
                [first, ..] => country()
                    .and_then(|c| fits.iter().copied().find(|&b| self.brands[b as usize].countries.binary_search_by(|x| x.as_str().cmp(c)).is_ok()))
                    .or(Some(*first)),
            }
        };
        if let Some(b) = row.brand.as_deref().and_then(|n| pick(n, false)) {
            return Some(b);
        }
        let strict = row.source == Some(SourceType::Fsq) || row.brand.is_none();
        if let Some(b) = pick(&row.name, strict) {
            return Some(b);
        }
        // "Starbucks - Michigan Ave", "Walgreens #1234", "Dunkin' (Loop)": the brand part.
        let cut = [" - ", " – ", " | ", "#", "("].iter().filter_map(|p| row.name.find(p)).min().unwrap_or(row.name.len());
        let head = row.name[..cut].trim();
        if cut < row.name.len() && !head.is_empty() {
            if let Some(b) = pick(head, strict) {
                return Some(b);
            }
        }
        // "Starbucks Chicago", "McDonald's Union Station": drop trailing words, longest
        // brand first, and only where the category fits (a name prefix alone is weak).
        let words: Vec<&str> = head.split_whitespace().collect();
        (1..words.len()).rev().take(8).find_map(|k| pick(&words[..k].join(" "), true))
    }

    /// Why a row no brand claims is left out: a tag category outside the scope table is out of
    /// scope (`amenity/parking`, `office/insurance`); a category that names no kind of store is
    /// not a storefront (Overture's `park`, Foursquare's "Residential Building"); the rest are
    /// stores of a brand the catalog does not know.
    pub fn unmatched(&self, row: &SourceRow) -> Skip {
        let Some(category) = row.category.as_deref() else { return Skip::NoBrandMatch };
        if let Some((key, _)) = category.split_once('/') {
            if matches!(row.source, Some(SourceType::Osm) | Some(SourceType::Atp)) && PLACE_KEYS.contains(&key) {
                return if self.scope.contains_key(category) { Skip::NoBrandMatch } else { Skip::OutOfScope };
            }
        }
        if self.class_of(category).is_some() {
            Skip::NoBrandMatch
        } else {
            Skip::NotStorefront
        }
    }

    pub fn default_storefront(&self, brand: u32) -> StorefrontType {
        self.brands[brand as usize].default_storefront
    }
}
