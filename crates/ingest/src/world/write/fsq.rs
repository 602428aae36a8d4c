//! Foursquare OS Places as Parquet with its column names: `fsq_place_id`, `latitude`,
//! `longitude`, address fields, `date_refreshed`, `date_closed`, `fsq_category_labels`.

use polars_error::PolarsResult;
use storemap_core::{format_iso, DAY_S};

use super::parquet::{numbers, opt_strs, singleton_lists, strs, Column};
use super::{hex_id, round6, Sighted};
use crate::catalog::CatalogBrand;

/// Foursquare's place id: derived from the store, so an Overture row taken from Foursquare can
/// name it.
pub(super) fn fsq_id(seed: u64, store_key: &str) -> String {
    hex_id(seed, "fsq", store_key, 24)
}

#[derive(Default)]
pub(super) struct FsqColumns {
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

impl FsqColumns {
    /// Rows waiting.
    pub(super) fn len(&self) -> usize {
        self.id.len()
    }

    /// Moves another brand's rows after these.
    pub(super) fn append(&mut self, other: FsqColumns) {
        super::append_columns!(self, other: FsqColumns; id, name, lat, lng, address, locality, region, postcode, country, tel, created, refreshed, closed, label);
    }

    /// Adds one sighting; returns its id.
    pub(super) fn push(&mut self, x: &Sighted) -> String {
        let (s, store, city) = (x.s, x.store, x.city);
        let f = self;
        let id = fsq_id(x.seed, x.store_key);
        f.id.push(id.clone());
        f.name.push(s.name.clone());
        f.lat.push(round6(s.lat));
        f.lng.push(round6(s.lng));
        let addr = s.with_address;
        f.address.push(addr.then(|| store.address.line.clone()));
        f.locality.push(addr.then(|| crate::world::town::of_store(city, store).to_string()));
        f.region.push((addr && !city.admin1.is_empty()).then(|| city.admin1.clone()));
        f.postcode.push((addr && !store.postcode.is_empty()).then(|| store.postcode.clone()));
        f.country.push(s.with_country.then(|| store.country.clone()));
        f.tel.push((!store.phone.is_empty()).then(|| store.phone.clone()));
        f.created.push(format_iso(x.as_of - 3 * 365 * DAY_S)[..10].into());
        f.refreshed.push(x.seen[..10].into());
        f.closed.push(s.closed_marker.then(|| format_iso(x.as_of - 30 * DAY_S)[..10].to_string()));
        f.label.push(fsq_label(x.brand).into());
        id
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

pub(super) fn fsq_frame(f: FsqColumns) -> PolarsResult<Vec<Column>> {
    Ok(vec![
        strs("fsq_place_id", f.id),
        strs("name", f.name),
        numbers("latitude", f.lat),
        numbers("longitude", f.lng),
        opt_strs("address", f.address),
        opt_strs("locality", f.locality),
        opt_strs("region", f.region),
        opt_strs("postcode", f.postcode),
        opt_strs("country", f.country),
        strs("date_created", f.created),
        strs("date_refreshed", f.refreshed),
        opt_strs("date_closed", f.closed),
        opt_strs("tel", f.tel),
        singleton_lists(strs("fsq_category_labels", f.label), None),
    ])
}
