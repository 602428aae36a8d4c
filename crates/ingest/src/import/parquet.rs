//! Column access over a polars DataFrame read from Parquet: plain, struct-field and list
//! columns, all read column-at-a-time (lists through their offsets and flattened values, not a
//! Series per row). A column the file lacks reads as all-null, since publishers add and drop
//! columns between releases.

use std::path::Path;

use polars::prelude::*;

use crate::error::{IngestError, Result};
use crate::{ImportReport, SourceRow};

/// The file loop both Parquet importers share: every `.parquet` file of a file or folder,
/// read whole, handed to `read_rows`; a file that fails names itself.
pub fn import_files(
    path: &Path,
    source: storemap_core::SourceType,
    read_rows: fn(&DataFrame, &str, &mut Vec<SourceRow>, &mut ImportReport) -> PolarsResult<()>,
) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut report = ImportReport::new(source);
    let mut rows = Vec::new();
    for file in super::input_files(path, &[".parquet"])? {
        let name = file.display().to_string();
        let df = read_frame(&file)?;
        report.files += 1;
        read_rows(&df, &name, &mut rows, &mut report).map_err(|e| IngestError::file(&name, e))?;
    }
    report.rows_kept = rows.len() as u64;
    Ok((rows, report))
}

pub fn read_frame(path: &Path) -> Result<DataFrame> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| IngestError::io(&name, e))?;
    // A truncated or non-Parquet file is an error for the whole file, named.
    ParquetReader::new(file).finish().map_err(|e| IngestError::file(&name, format!("not a readable Parquet file: {e}")))
}

/// A string column, or a column the file does not have.
pub enum Col {
    Str(StringChunked),
    Missing,
}

impl Col {
    pub fn from_series(s: &Series) -> PolarsResult<Col> {
        let s = if s.dtype() == &DataType::String { s.clone() } else { s.cast(&DataType::String)? };
        Ok(Col::Str(s.str()?.rechunk().into_owned()))
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        match self {
            Col::Str(ca) => ca.get(i),
            Col::Missing => None,
        }
    }
}

pub fn str_col(df: &DataFrame, name: &str) -> PolarsResult<Col> {
    match df.column(name) {
        Ok(c) => Col::from_series(c.as_materialized_series()),
        Err(_) => Ok(Col::Missing),
    }
}

pub fn f64_col(df: &DataFrame, name: &str) -> PolarsResult<Option<Float64Chunked>> {
    match df.column(name) {
        Ok(c) => Ok(Some(c.as_materialized_series().cast(&DataType::Float64)?.f64()?.rechunk().into_owned())),
        Err(_) => Ok(None),
    }
}

/// `column.field` of a struct column.
pub fn struct_str(df: &DataFrame, column: &str, field: &str) -> PolarsResult<Col> {
    match df.column(column) {
        Ok(c) => match c.as_materialized_series().struct_()?.field_by_name(field) {
            Ok(f) => Col::from_series(&f),
            Err(_) => Ok(Col::Missing),
        },
        Err(_) => Ok(Col::Missing),
    }
}

/// For each row, the first element of a list column (of strings, or of structs when `field`
/// names the struct field to take).
pub fn list_first_str(df: &DataFrame, column: &str, field: Option<&str>) -> PolarsResult<Col> {
    let Some((offsets, values)) = list_parts(df, column, field)? else {
        return Ok(Col::Missing);
    };
    let firsts: StringChunked = offsets
        .windows(2)
        .map(|w| if w[0] < w[1] { values.get(w[0] as usize) } else { None })
        .collect();
    Ok(Col::Str(firsts.with_name(column.into())))
}

/// For each row, every element's `field` of a list-of-structs column.
pub fn list_strs(df: &DataFrame, column: &str, field: &str) -> PolarsResult<Vec<Vec<Option<String>>>> {
    let Some((offsets, values)) = list_parts(df, column, Some(field))? else {
        return Ok(vec![Vec::new(); df.height()]);
    };
    Ok(offsets
        .windows(2)
        .map(|w| (w[0] as usize..w[1] as usize).map(|k| values.get(k).map(str::to_string)).collect())
        .collect())
}

/// The list's offsets and its flattened values (as strings).
fn list_parts(df: &DataFrame, column: &str, field: Option<&str>) -> PolarsResult<Option<(Vec<i64>, StringChunked)>> {
    let Ok(c) = df.column(column) else {
        return Ok(None);
    };
    let list = c.as_materialized_series().list()?.rechunk().into_owned();
    let offsets: Vec<i64> = list.offsets()?.as_slice().to_vec();
    let inner = list.get_inner();
    let values = match field {
        Some(f) => match inner.struct_()?.field_by_name(f) {
            Ok(s) => s,
            Err(_) => return Ok(None),
        },
        None => inner,
    };
    let values = if values.dtype() == &DataType::String { values } else { values.cast(&DataType::String)? };
    let values = values.str()?.rechunk().into_owned();
    Ok(Some((offsets, values)))
}
