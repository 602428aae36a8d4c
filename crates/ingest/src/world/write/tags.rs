//! OSM-style tags, as both the OSM and the AllThePlaces writers put them on a sighting.

use serde::Serialize;

use crate::catalog::CatalogBrand;
use crate::reference::City;
use crate::world::brand::{Sighting, TrueStore};

/// OSM-style tags, as both OSM and ATP write them.
#[derive(Serialize, Default)]
pub(super) struct Tags<'a> {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    opening_hours: Option<&'a str>,
}

impl<'a> Tags<'a> {
    /// `hours`: what this source publishes of the store's hours (`world::hours::published`).
    pub(super) fn new(brand: &'a CatalogBrand, s: &'a Sighting, store: &'a TrueStore, city: &'a City, hours: Option<&'a str>) -> Tags<'a> {
        let (key, value) = brand.category.split_once('/').unwrap_or(("shop", "yes"));
        let addr = s.with_address;
        let mut t = Tags {
            brand: s.tag_brand.then_some(brand.name.as_str()),
            brand_wikidata: if s.tag_wikidata { brand.wikidata.as_deref() } else { None },
            name: &s.name,
            housenumber: addr.then(|| store.address.number()),
            street: addr.then(|| store.address.street()),
            city: addr.then_some(crate::world::town::of_store(city, store)),
            state: (addr && !city.admin1.is_empty()).then_some(city.admin1.as_str()),
            postcode: (addr && !store.postcode.is_empty()).then_some(store.postcode.as_str()),
            country: s.with_country.then_some(store.country.as_str()),
            phone: (addr && !store.phone.is_empty()).then_some(store.phone.as_str()),
            opening_hours: hours,
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
