//! A worldwide Overture places file made from a real one: copies of its rows moved to places on
//! every continent, one after another, in row groups that each stay within one copy, with the
//! `bbox` covering column and statistics Overture's files carry. It stands in for a release
//! file (whose rows Overture sorts by place, so a country is a few row groups) where a test or
//! a benchmark cuts an area out of one by range requests.

use std::path::Path;

use polars_arrow::array::{Array, BinaryViewArray, PrimitiveArray, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field};

use super::parquet::{numbers, structs, write_groups, Layout};
use crate::error::{IngestError, Result};
use crate::import::parquet::ParquetFile;

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
    let bad = |what: &str| IngestError::file(sample.display(), what.to_string());
    let columns = ParquetFile::open(sample)?.read_all()?;
    let n = columns.first().map_or(0, |c| c.1.len());
    let per_group = n.div_ceil(spread.groups_per_copy.max(1)).max(1);
    let find = |c: &str| columns.iter().position(|(f, _)| f.name.as_str() == c);
    let (Some(g), Some(b)) = (find("geometry"), find("bbox")) else { return Err(bad("the sample has no geometry or no bbox column")) };
    let geometry = columns[g].1.as_any().downcast_ref::<BinaryViewArray>().ok_or_else(|| bad("geometry is not binary"))?.clone();
    let bbox = columns[b].1.as_any().downcast_ref::<StructArray>().ok_or_else(|| bad("bbox is not a struct"))?;
    let field = |f: &str| -> Result<Vec<f64>> {
        let k = bbox.fields().iter().position(|x| x.name.as_str() == f).ok_or_else(|| bad("bbox lacks a corner"))?;
        let v = polars_compute::cast::cast(bbox.values()[k].as_ref(), &ArrowDataType::Float64, Default::default())
            .map_err(|e| IngestError::file(sample.display(), e))?;
        let v = v.as_any().downcast_ref::<PrimitiveArray<f64>>().expect("cast to f64");
        Ok(v.values().as_slice().to_vec())
    };
    let (xmin, ymin, xmax, ymax) = (field("xmin")?, field("ymin")?, field("xmax")?, field("ymax")?);
    let fold = |v: &[f64], init: f64, f: fn(f64, f64) -> f64| if v.is_empty() { 0.0 } else { v.iter().copied().fold(init, f) };
    let bounds = [fold(&xmin, f64::MAX, f64::min), fold(&ymin, f64::MAX, f64::min), fold(&xmax, f64::MIN, f64::max), fold(&ymax, f64::MIN, f64::max)];
    let centre = ((bounds[0] + bounds[2]) / 2.0, (bounds[1] + bounds[3]) / 2.0);
    let shift = |v: &[f64], d: f64| v.iter().map(|x| x + d).collect::<Vec<f64>>();

    let mut fields: Vec<Field> = columns.iter().map(|c| c.0.clone()).collect();
    let mut groups = Vec::new();
    let mut boxes = Vec::new();
    for &(_, lng, lat) in spread.places {
        let (dx, dy) = (lng - centre.0, lat - centre.1);
        let moved = BinaryViewArray::from_slice(geometry.iter().map(|g| g.map(|wkb| move_point(wkb, dx, dy))).collect::<Vec<_>>());
        let (bbox_field, bbox_array) = structs(
            "bbox",
            vec![numbers("xmin", shift(&xmin, dx)), numbers("ymin", shift(&ymin, dy)), numbers("xmax", shift(&xmax, dx)), numbers("ymax", shift(&ymax, dy))],
            None,
        );
        fields[b] = bbox_field;
        let mut copy: Vec<Box<dyn Array>> = columns.iter().map(|c| c.1.clone()).collect();
        copy[g] = moved.boxed();
        // Written as plain binary, as before: the `geo` footer entry says it is WKB.
        fields[g] = Field::new(fields[g].name.clone(), ArrowDataType::BinaryView, true);
        copy[b] = bbox_array;
        // Each copy in row groups of its own.
        for start in (0..n).step_by(per_group) {
            groups.push(copy.iter().map(|a| a.sliced(start, per_group.min(n - start))).collect());
        }
        boxes.push([bounds[0] + dx, bounds[1] + dy, bounds[2] + dx, bounds[3] + dy]);
    }
    if groups.is_empty() {
        return Err(IngestError::file(&name, "no places to spread to"));
    }
    let row_groups = groups.len();
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
    let layout = Layout { row_group_rows: per_group, statistics: spread.statistics, metadata: vec![("geo".to_owned(), geo.to_string())] };
    write_groups(out, fields, groups, &layout)?;
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
