//! A worldwide Overture places file made from a real one: copies of its rows moved to places on
//! every continent, one after another, in row groups that each stay within one copy, with the
//! `bbox` covering column and statistics Overture's files carry. It stands in for a release
//! file (whose rows Overture sorts by place, so a country is a few row groups) where a test or
//! a benchmark cuts an area out of one by range requests.

use std::path::Path;

use polars_core::prelude::*;
use polars_io::prelude::*;

use crate::error::{IngestError, Result};
use crate::import::parquet::{binary_col, read_frame};

/// A copy on every continent, named by the country it lands in: three in the US (its mainland,
/// Alaska and Hawaii, which a country's boxes must all cover) and one each side of the
/// antimeridian in Fiji and New Zealand.
pub const WORLD: &[(&str, f64, f64)] = &[
    ("US", -105.27, 40.015),
    ("CH", 8.54, 47.37),
    ("FR", 2.35, 48.86),
    ("DE", 13.40, 52.52),
    ("JP", 139.69, 35.69),
    ("AU", 151.21, -33.87),
    ("BR", -46.63, -23.55),
    ("ZA", 18.42, -33.92),
    ("IN", 72.88, 19.08),
    ("FJ", 178.44, -18.14),
    ("CA", -79.38, 43.65),
    ("MX", -99.13, 19.43),
    ("EG", 31.24, 30.04),
    ("RU", 37.62, 55.75),
    ("AR", -58.38, -34.60),
    ("NZ", 174.76, -36.85),
    ("US", -149.90, 61.22),
    ("US", -157.86, 21.31),
    ("NG", 3.38, 6.52),
    ("ID", 106.85, -6.21),
];

/// Where each copy goes: a place (name, longitude, latitude); the first copy is moved so that
/// the sample's centre lands on the first place, and so on.
pub struct Spread<'a> {
    pub places: &'a [(&'a str, f64, f64)],
    /// Row groups per copy: the sample's rows are cut into this many (the last takes the rest).
    pub groups_per_copy: usize,
    /// Column statistics (Overture writes them); without, a file cannot be cut by area.
    pub statistics: bool,
}

/// What was written: the rows and row groups of each copy, in order.
#[derive(Debug)]
pub struct SpreadSummary {
    pub rows_per_copy: usize,
    pub row_groups: usize,
    /// Each copy's box (west, south, east, north) after the move.
    pub boxes: Vec<[f64; 4]>,
}

/// Writes `out` from the Overture file `sample` (which must carry the `bbox` struct column).
pub fn spread_overture(sample: &Path, out: &Path, spread: &Spread) -> Result<SpreadSummary> {
    let name = out.display().to_string();
    let fail = |e: PolarsError| IngestError::file(&name, e);
    let df = read_frame(sample)?;
    let n = df.height();
    let per_group = n.div_ceil(spread.groups_per_copy.max(1)).max(1);
    let bbox = df.column("bbox").map_err(fail)?.as_materialized_series().struct_().map_err(fail)?.clone();
    let field =
        |f: &str| -> Result<Float64Chunked> { Ok(bbox.field_by_name(f).map_err(fail)?.cast(&DataType::Float64).map_err(fail)?.f64().map_err(fail)?.clone()) };
    let (xmin, ymin, xmax, ymax) = (field("xmin")?, field("ymin")?, field("xmax")?, field("ymax")?);
    let bounds = [xmin.min().unwrap_or(0.0), ymin.min().unwrap_or(0.0), xmax.max().unwrap_or(0.0), ymax.max().unwrap_or(0.0)];
    let centre = ((bounds[0] + bounds[2]) / 2.0, (bounds[1] + bounds[3]) / 2.0);
    let geometry = binary_col(&df, "geometry").map_err(fail)?.ok_or_else(|| IngestError::file(&name, "the sample has no geometry column"))?;

    let mut copies: Vec<DataFrame> = Vec::new();
    let mut boxes = Vec::new();
    for &(_, lng, lat) in spread.places {
        let (dx, dy) = (lng - centre.0, lat - centre.1);
        let moved: BinaryChunked = geometry.iter().map(|g| g.map(|wkb| move_point(wkb, dx, dy))).collect();
        let fields = [
            (&xmin + dx).with_name("xmin".into()),
            (&ymin + dy).with_name("ymin".into()),
            (&xmax + dx).with_name("xmax".into()),
            (&ymax + dy).with_name("ymax".into()),
        ]
        .map(|c| c.into_series());
        let mut copy = df.clone();
        copy.with_column(moved.with_name("geometry".into()).into_column()).map_err(fail)?;
        copy.with_column(StructChunked::from_series("bbox".into(), n, fields.iter()).map_err(fail)?.into_column()).map_err(fail)?;
        // Each copy in row groups of its own: polars cuts row groups by the frame's chunks.
        for start in (0..n).step_by(per_group) {
            copies.push(copy.slice(start as i64, per_group.min(n - start)));
        }
        boxes.push([bounds[0] + dx, bounds[1] + dy, bounds[2] + dx, bounds[3] + dy]);
    }
    let row_groups = copies.len();
    let mut all = copies.into_iter().reduce(|mut a, b| {
        a.vstack_mut_owned(b).expect("copies share the sample's schema");
        a
    });
    let Some(all) = all.as_mut() else { return Err(IngestError::file(&name, "no places to spread to")) };
    let union = boxes.iter().fold([f64::MAX, f64::MAX, f64::MIN, f64::MIN], |u, b| [u[0].min(b[0]), u[1].min(b[1]), u[2].max(b[2]), u[3].max(b[3])]);
    // GeoParquet 1.1, as Overture writes it, with the optional file bbox a cut must narrow.
    let geo = serde_json::json!({
        "version": "1.1.0",
        "primary_column": "geometry",
        "columns": {"geometry": {
            "encoding": "WKB",
            "geometry_types": ["Point"],
            "bbox": union,
            "covering": {"bbox": {"xmin": ["bbox", "xmin"], "ymin": ["bbox", "ymin"], "xmax": ["bbox", "xmax"], "ymax": ["bbox", "ymax"]}}
        }}
    });
    let file = std::fs::File::create(out).map_err(|e| IngestError::io(&name, e))?;
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Snappy)
        .with_statistics(if spread.statistics { StatisticsOptions::full() } else { StatisticsOptions::empty() })
        .with_row_group_size(Some(per_group))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![("geo".to_owned(), geo.to_string())])))
        .finish(all)
        .map_err(fail)?;
    Ok(SpreadSummary { rows_per_copy: n, row_groups, boxes })
}

/// A WKB point (either byte order) moved by (dx, dy); any other geometry is left as it is.
fn move_point(wkb: &[u8], dx: f64, dy: f64) -> Vec<u8> {
    let mut out = wkb.to_vec();
    if wkb.len() == 21 && wkb[1..5] == [1, 0, 0, 0] && wkb[0] == 1 {
        let x = f64::from_le_bytes(wkb[5..13].try_into().expect("8 bytes")) + dx;
        let y = f64::from_le_bytes(wkb[13..21].try_into().expect("8 bytes")) + dy;
        out[5..13].copy_from_slice(&x.to_le_bytes());
        out[13..21].copy_from_slice(&y.to_le_bytes());
    } else if wkb.len() == 21 && wkb[0] == 0 && wkb[1..5] == [0, 0, 0, 1] {
        let x = f64::from_be_bytes(wkb[5..13].try_into().expect("8 bytes")) + dx;
        let y = f64::from_be_bytes(wkb[13..21].try_into().expect("8 bytes")) + dy;
        out[5..13].copy_from_slice(&x.to_be_bytes());
        out[13..21].copy_from_slice(&y.to_be_bytes());
    }
    out
}
