//! A map of what a request serves: the one place the renderer meets the dataset. It picks the
//! rows (a focus map is a map of its country's stores), prices them before drawing, and turns
//! the request's picture options into a [`MapRequest`] with the product's defaults.

use std::collections::BTreeSet;

use storemap_core::{Budget, Filters, NearbyIndex, Refusal, Snapshot, SourceMask};

use crate::atlas::Atlas;
use crate::camera::Viewport;
use crate::color::parse_hex;
use crate::encode::ImageFormat;
use crate::error::{RenderError, Result};
use crate::focus::{territories_of, FocusSpec, FOCUS_FILL, FOCUS_OUTLINE, FOCUS_OUTLINE_WIDTH};
use crate::render::{admit, render, render_map, MapRequest, MarkerGroup, DEFAULT_MARKER_RADIUS};
use crate::theme::Themes;

/// Which country a focus map draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FocusCountry {
    /// The country most of the request's stores are in.
    Auto,
    /// ISO 3166-1 alpha-2, any case.
    Code(String),
}

/// A focus map as requested; `None` fields take the product's defaults.
#[derive(Debug, Clone)]
pub struct FocusQuery {
    pub country: FocusCountry,
    pub mainland_only: bool,
    pub conus: bool,
    /// US state codes to outline.
    pub regions: Vec<String>,
    pub fill_color: Option<String>,
    pub outline_color: Option<String>,
    pub outline_width: Option<f32>,
    /// A colour; `None` or "transparent" for none.
    pub background: Option<String>,
}

/// A map request: the rows (every reconciled row, community-map rows included; `filters`'
/// `verified_only` is ignored) and the picture.
#[derive(Debug, Clone)]
pub struct MapQuery {
    pub brands: Vec<u32>,
    pub filters: Filters,
    /// Markers drawn at most (trial keys); `total` still counts them all.
    pub limit: Option<u32>,
    pub budget: Budget,
    pub width: u32,
    pub height: u32,
    pub scale: u32,
    pub dpi: u32,
    pub style: String,
    pub format: ImageFormat,
    pub viewport: Viewport,
    pub marker_radius: Option<f32>,
    /// One colour per brand; `marker_color` for the rest; the theme's otherwise.
    pub marker_colors: Vec<String>,
    pub marker_color: Option<String>,
    pub heatmap: bool,
    pub legend: bool,
    pub focus: Option<FocusQuery>,
}

/// A map request's answer: the image, or why there is none. An empty body without a refusal
/// means nothing matched.
#[derive(Debug, Clone, Default)]
pub struct MapAnswer {
    pub body: Vec<u8>,
    /// Markers drawn, or that would have been when refused.
    pub count: u32,
    /// Locations that matched before the limit.
    pub total: u32,
    pub sources: SourceMask,
    pub region: String,
    /// The focus map's country, "auto" resolved.
    pub focus_country: Option<String>,
    /// `coverage_confidence` of the markers drawn (community-only rows included).
    pub coverage: Option<f64>,
    pub refused: Option<Refusal>,
    /// The street map's tile attribution, when the image shows its tiles.
    pub attribution: Option<String>,
    /// A basemap tile's first failure (skipped), for the log.
    pub warning: Option<String>,
    /// The legend asked for is left out (too small an image for it).
    pub legend_omitted: bool,
}

impl MapAnswer {
    fn refused(why: Refusal, count: u32, total: u32, region: String, focus_country: Option<String>) -> MapAnswer {
        MapAnswer { count, total, region, focus_country, refused: Some(why), ..MapAnswer::default() }
    }
}

/// The filter sets a map's rows come from. A focus map is a map of the focus country's stores:
/// without a country filter the focus country becomes the filter ("auto": the country most
/// matching stores are in), so the count, the headers and the price are that country's and
/// nothing is drawn outside it. A composite focus map also carries the country's territories
/// with codes of their own (Puerto Rico on a US map) unless it is cut to its mainland: their
/// stores are counted, priced and drawn in an inset.
fn row_filters(snap: &Snapshot, atlas: &Atlas, q: &MapQuery) -> Result<Vec<Filters>> {
    let mut filters = Filters { verified_only: false, ..q.filters.clone() };
    let Some(focus) = q.focus.as_ref().filter(|_| filters.country.is_none()) else {
        return Ok(vec![filters]);
    };
    let country = match &focus.country {
        FocusCountry::Auto => snap.majority_country(snap.serve(&q.brands, std::slice::from_ref(&filters), None)?.rows()),
        FocusCountry::Code(code) => {
            let code = code.to_ascii_uppercase();
            // An unknown focus country is the request's mistake, not an empty result.
            if atlas.country(&code).is_none() {
                return Err(RenderError::UnknownCountry(code));
            }
            Some(code)
        }
    };
    let Some(country) = country else {
        return Ok(vec![filters]);
    };
    filters.country = Some(country.clone());
    let mut sets = vec![filters.clone()];
    if !focus.conus && !focus.mainland_only {
        sets.extend(territories_of(&country).iter().map(|t| Filters { country: Some(t.to_string()), ..filters.clone() }));
    }
    Ok(sets)
}

/// A map filtered to a country alone (no state, city, postcode or radius) and given no bounds or
/// centre frames the country's mainland, as a focus map does, instead of fitting its markers:
/// fitted, a map of a brand's US stores loses the north-west and Maine wherever the brand has
/// none. Any narrower filter fits the markers as before.
fn framed(atlas: &Atlas, viewport: Viewport, country: Option<&str>, narrower: bool) -> Viewport {
    match (viewport, country) {
        (Viewport::Auto, Some(code)) if !narrower => atlas.country_frame(code).map_or(Viewport::Auto, Viewport::Bounds),
        (v, _) => v,
    }
}

/// The focus request as the renderer's spec, with the product's defaults; "auto" is the
/// country most served rows are in.
fn focus_spec(snap: &Snapshot, f: &FocusQuery, rows: &[u32]) -> Result<FocusSpec> {
    let country = match &f.country {
        FocusCountry::Auto => snap.majority_country(rows.iter().copied()).unwrap_or_default(),
        FocusCountry::Code(c) => c.to_ascii_uppercase(),
    };
    let background = match f.background.as_deref() {
        None | Some("transparent") => None,
        Some(c) => Some(parse_hex(c)?),
    };
    // Territories on the map: those the served rows are in.
    let territories = territories_of(&country).iter().filter(|t| rows.iter().any(|&r| snap.row_country(r as usize) == **t)).map(|t| t.to_string()).collect();
    Ok(FocusSpec {
        country,
        mainland_only: f.mainland_only,
        conus: f.conus,
        regions: f.regions.clone(),
        territories,
        fill: parse_hex(f.fill_color.as_deref().unwrap_or(FOCUS_FILL))?,
        outline: parse_hex(f.outline_color.as_deref().unwrap_or(FOCUS_OUTLINE))?,
        outline_width: f.outline_width.unwrap_or(FOCUS_OUTLINE_WIDTH),
        background,
    })
}

/// Draws a request's map. In the contract's order: a request beyond the work bound is invalid
/// whatever the balance; then the price; then the drawing.
pub fn render_served(snap: &Snapshot, atlas: &Atlas, themes: &Themes, q: &MapQuery) -> Result<MapAnswer> {
    snap.check_brands(&q.brands)?;
    if q.budget.passed() {
        return Ok(MapAnswer::refused(Refusal::Deadline, 0, 0, q.filters.region_text(), None));
    }
    let sets = row_filters(snap, atlas, q)?;
    let region = sets[0].region_text();
    let served = snap.serve(&q.brands, &sets, q.limit)?;
    let colour = |i: usize| -> Result<Option<[u8; 3]>> {
        match q.marker_colors.get(i).or(q.marker_color.as_ref()) {
            Some(c) => parse_hex(c).map(Some),
            None => Ok(None),
        }
    };
    let groups = q
        .brands
        .iter()
        .zip(&served.by_brand)
        .enumerate()
        .map(|(i, (&b, rows))| {
            Ok(MarkerGroup {
                color: colour(i)?,
                name: snap.brands()[b as usize].name.clone(),
                points: rows.iter().map(|&r| snap.row_lat_lng(r as usize)).collect(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let count = served.count();
    if count == 0 {
        // Nothing to draw: the service answers 404 without an image.
        return Ok(MapAnswer { total: served.total, sources: served.sources, region, ..MapAnswer::default() });
    }
    let rows: Vec<u32> = served.rows().collect();
    let focus = q.focus.as_ref().map(|f| focus_spec(snap, f, &rows)).transpose()?;
    let focus_country = focus.as_ref().map(|f| f.country.clone());
    let map = MapRequest {
        width: q.width,
        height: q.height,
        scale: q.scale,
        dpi: q.dpi,
        style: q.style.clone(),
        format: q.format,
        viewport: framed(atlas, q.viewport, q.filters.country.as_deref(), {
            let f = &q.filters;
            f.state.is_some() || f.city.is_some() || f.postcode.is_some() || f.radius_km.is_some()
        }),
        marker_radius: q.marker_radius.unwrap_or(DEFAULT_MARKER_RADIUS),
        groups,
        links: Vec::new(),
        rings: false,
        heatmap: q.heatmap,
        legend: q.legend,
        focus,
        deadline: q.budget.deadline,
    };
    admit(&map)?;
    if q.budget.cannot_pay(count) {
        return Ok(MapAnswer::refused(Refusal::Credits, count, served.total, region, focus_country));
    }
    let drawn = match render_map(atlas, themes, &map) {
        Err(RenderError::DeadlinePassed) => return Ok(MapAnswer::refused(Refusal::Deadline, count, served.total, region, focus_country)),
        r => r?,
    };
    Ok(MapAnswer {
        body: drawn.body,
        count,
        total: served.total,
        sources: served.sources,
        region,
        focus_country,
        coverage: served.coverage(),
        refused: None,
        attribution: drawn.attribution,
        warning: drawn.warning,
        legend_omitted: drawn.legend_omitted,
    })
}

/// An overlap map: the pairs of stores of two to five brands within a distance, drawn as a line
/// between the two stores of each pair, over each brand's paired stores as markers.
#[derive(Debug, Clone)]
pub struct OverlapMapQuery {
    pub brands: Vec<u32>,
    pub distance_m: f64,
    /// Pairs whose first store is in this country.
    pub country: Option<String>,
    /// Priced in pairs.
    pub budget: Budget,
    pub width: u32,
    pub height: u32,
    pub style: String,
    pub format: ImageFormat,
    pub marker_radius: Option<f32>,
    /// One colour per brand; the company palette otherwise.
    pub marker_colors: Vec<String>,
    pub legend: bool,
}

/// Draws an overlap request's map: the pairs worked out, priced (`count` is the pairs), then
/// drawn, fitted to the paired stores. No pair: an empty answer, which the service answers 404.
pub fn render_overlap(snap: &Snapshot, index: &NearbyIndex, atlas: &Atlas, themes: &Themes, q: &OverlapMapQuery) -> Result<MapAnswer> {
    let region = q.country.as_deref().map_or_else(|| "worldwide".to_string(), str::to_uppercase);
    if q.budget.passed() {
        return Ok(MapAnswer::refused(Refusal::Deadline, 0, 0, region, None));
    }
    let Some(overlap) = index.overlap(snap, &q.brands, q.distance_m, q.country.as_deref(), &q.budget)? else {
        return Ok(MapAnswer::refused(Refusal::Deadline, 0, 0, region, None));
    };
    let count = overlap.pairs.len() as u32;
    let mut sources = SourceMask::default();
    for p in &overlap.pairs {
        sources.0 |= snap.row_sources(p.a as usize).0 | snap.row_sources(p.b as usize).0;
    }
    if count == 0 {
        return Ok(MapAnswer { region, ..MapAnswer::default() });
    }
    // Each brand's stores that have a partner, once each.
    let groups = q
        .brands
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let rec = &snap.brands()[b as usize];
            let rows: BTreeSet<u32> = overlap.pairs.iter().flat_map(|p| [p.a, p.b]).filter(|r| (rec.row_start..rec.row_end).contains(r)).collect();
            Ok(MarkerGroup {
                color: q.marker_colors.get(i).map(|c| parse_hex(c)).transpose()?,
                name: rec.name.clone(),
                points: rows.into_iter().map(|r| snap.row_lat_lng(r as usize)).collect(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let map = MapRequest {
        style: q.style.clone(),
        format: q.format,
        viewport: framed(atlas, Viewport::Auto, q.country.as_deref(), false),
        marker_radius: q.marker_radius.unwrap_or(DEFAULT_MARKER_RADIUS),
        links: overlap.pairs.iter().map(|p| [snap.row_lat_lng(p.a as usize), snap.row_lat_lng(p.b as usize)]).collect(),
        rings: true,
        legend: q.legend,
        deadline: q.budget.deadline,
        ..MapRequest::new(q.width, q.height, groups)
    };
    admit(&map)?;
    if q.budget.cannot_pay(count) {
        return Ok(MapAnswer::refused(Refusal::Credits, count, count, region, None));
    }
    let drawn = match render_map(atlas, themes, &map) {
        Err(RenderError::DeadlinePassed) => return Ok(MapAnswer::refused(Refusal::Deadline, count, count, region, None)),
        r => r?,
    };
    Ok(MapAnswer {
        body: drawn.body,
        count,
        total: count,
        sources,
        region,
        focus_country: None,
        coverage: None,
        refused: None,
        attribution: drawn.attribution,
        warning: drawn.warning,
        legend_omitted: drawn.legend_omitted,
    })
}

/// What the status endpoint reports of the renderer.
#[derive(Debug, Clone, PartialEq)]
pub struct RendererHealth {
    pub width: u32,
    pub height: u32,
    /// Bytes of the encoded PNG.
    pub png_bytes: u32,
    /// Whether the label font is loaded.
    pub font: bool,
}

/// Draws and encodes a small map with a label, a marker and a legend: the proof that the
/// renderer works end to end.
pub fn health_check(atlas: &Atlas, themes: &Themes) -> Result<RendererHealth> {
    let (width, height) = (96, 64);
    let group = MarkerGroup { color: None, name: "health".into(), points: vec![(48.8566, 2.3522)] };
    let req = MapRequest { viewport: Viewport::CenterZoom([48.8566, 2.3522], 4.0), legend: true, ..MapRequest::new(width, height, vec![group]) };
    let png = render(atlas, themes, &req)?;
    Ok(RendererHealth { width, height, png_bytes: png.len() as u32, font: atlas.has_font() })
}
