//! Parquet writing for the Overture and Foursquare writers: the file, and the few column
//! shapes they build (strings, structs, one-element lists).

use std::fs::File;
use std::path::Path;

use polars_core::prelude::*;
use polars_io::prelude::*;

use crate::error::{IngestError, Result};

pub(super) fn write_parquet(path: &Path, df: PolarsResult<DataFrame>) -> Result<()> {
    let name = path.display().to_string();
    let mut df = df.map_err(|e| IngestError::file(&name, e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
    }
    let file = File::create(path).map_err(|e| IngestError::io(&name, e))?;
    ParquetWriter::new(file).with_compression(ParquetCompression::Snappy).finish(&mut df).map_err(|e| IngestError::file(&name, e))?;
    Ok(())
}

pub(super) fn strs(name: &str, v: Vec<String>) -> Series {
    Series::new(name.into(), v)
}
pub(super) fn opt_strs(name: &str, v: Vec<Option<String>>) -> Series {
    Series::new(name.into(), v)
}
pub(super) fn structs(name: &str, fields: &[Series]) -> PolarsResult<Series> {
    let len = fields.first().map_or(0, |f| f.len());
    Ok(StructChunked::from_series(name.into(), len, fields.iter())?.into_series())
}
/// Each row's value as a one-element list (every generated row has exactly one address,
/// one source record and one category label).
pub(super) fn singleton_lists(s: Series) -> PolarsResult<Series> {
    s.reshape_list(&[ReshapeDimension::new(-1), ReshapeDimension::new(1)])
}
