//! Column access over a polars DataFrame read from Parquet: plain, struct-field and list
//! columns, all read column-at-a-time (lists through their offsets and flattened values, not a
//! Series per row). A column the file lacks reads as all-null, since publishers add and drop
//! columns between releases.

use std::path::Path;

use polars_core::prelude::*;
use polars_io::prelude::*;

use crate::error::{IngestError, Result};
use crate::{ImportReport, SourceRow};

/// The file loop both Parquet importers share: every `.parquet` file of a file or a folder
/// tree, read one at a time and handed to `read_rows`, whose rows go to `sink` before the next
/// file is read (a release is hundreds of parts); a file that fails names itself.
pub fn import_files(
    path: &Path,
    source: storemap_core::SourceType,
    read_rows: fn(&DataFrame, &str, &mut Vec<SourceRow>, &mut ImportReport) -> PolarsResult<()>,
    sink: &mut dyn FnMut(Vec<SourceRow>),
) -> Result<ImportReport> {
    let mut report = ImportReport::new(source);
    for file in super::input_files(path, &[".parquet"])? {
        let name = file.display().to_string();
        report.files += 1;
        if std::fs::metadata(&file).map_err(|e| IngestError::io(&name, e))?.len() == 0 {
            report.files_empty += 1;
            continue;
        }
        let df = read_frame(&file)?;
        let mut rows = Vec::new();
        read_rows(&df, &name, &mut rows, &mut report).map_err(|e| IngestError::file(&name, e))?;
        report.rows_kept += rows.len() as u64;
        sink(rows);
    }
    Ok(report)
}

/// A column only when the file has it with a value type (Arrow writers emit `null`-typed
/// columns for fields no row of a file has), as its storage type: an Arrow extension type
/// (`geoarrow.wkb`) reads as the binary it is stored in.
fn column<'a>(df: &'a DataFrame, name: &str) -> Option<&'a Series> {
    df.column(name).ok().map(|c| c.as_materialized_series().to_storage()).filter(|s| s.dtype() != &DataType::Null)
}

/// The names of `required` columns the file lacks (all null-typed counts as lacking).
pub fn missing_columns(df: &DataFrame, required: &[&str]) -> Vec<String> {
    required.iter().filter(|c| column(df, c).is_none()).map(|c| c.to_string()).collect()
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
    match column(df, name) {
        Some(s) => Col::from_series(s),
        None => Ok(Col::Missing),
    }
}

/// The first of several columns the file has (publishers rename columns between releases).
pub fn str_col_any(df: &DataFrame, names: &[&str]) -> PolarsResult<Col> {
    match names.iter().find_map(|n| column(df, n)) {
        Some(s) => Col::from_series(s),
        None => Ok(Col::Missing),
    }
}

pub fn f64_col(df: &DataFrame, name: &str) -> PolarsResult<Option<Float64Chunked>> {
    match column(df, name) {
        Some(s) => Ok(Some(s.cast(&DataType::Float64)?.f64()?.rechunk().into_owned())),
        None => Ok(None),
    }
}

/// A binary column (WKB geometry), whether the file tags it as `geoarrow.wkb` or not.
pub fn binary_col(df: &DataFrame, name: &str) -> PolarsResult<Option<BinaryChunked>> {
    match column(df, name) {
        Some(s) => {
            let s = if matches!(s.dtype(), DataType::Binary) { s.clone() } else { s.cast(&DataType::Binary)? };
            Ok(Some(s.binary()?.rechunk().into_owned()))
        }
        None => Ok(None),
    }
}

/// `column.field` of a struct column.
pub fn struct_str(df: &DataFrame, name: &str, field: &str) -> PolarsResult<Col> {
    match column(df, name).filter(|s| matches!(s.dtype(), DataType::Struct(_))) {
        Some(s) => match s.struct_()?.field_by_name(field) {
            Ok(f) if f.dtype() != &DataType::Null => Col::from_series(&f),
            _ => Ok(Col::Missing),
        },
        None => Ok(Col::Missing),
    }
}

/// `column.field.subfield` of a struct column (Overture's `brand.names.primary`).
pub fn struct_str2(df: &DataFrame, name: &str, field: &str, sub: &str) -> PolarsResult<Col> {
    let Some(s) = column(df, name).filter(|s| matches!(s.dtype(), DataType::Struct(_))) else { return Ok(Col::Missing) };
    let Ok(f) = s.struct_()?.field_by_name(field) else { return Ok(Col::Missing) };
    if !matches!(f.dtype(), DataType::Struct(_)) {
        return Ok(Col::Missing);
    }
    match f.struct_()?.field_by_name(sub) {
        Ok(g) if g.dtype() != &DataType::Null => Col::from_series(&g),
        _ => Ok(Col::Missing),
    }
}

/// For each row, the first element of a list column (of strings, or of structs when `field`
/// names the struct field to take).
pub fn list_first_str(df: &DataFrame, column: &str, field: Option<&str>) -> PolarsResult<Col> {
    let Some((offsets, values)) = list_parts(df, column, field)? else {
        return Ok(Col::Missing);
    };
    let firsts: StringChunked = offsets.windows(2).map(|w| if w[0] < w[1] { values.get(w[0] as usize) } else { None }).collect();
    Ok(Col::Str(firsts.with_name(column.into())))
}

/// For each row, every element's `field` of a list-of-structs column.
pub fn list_strs(df: &DataFrame, column: &str, field: &str) -> PolarsResult<Vec<Vec<Option<String>>>> {
    let Some((offsets, values)) = list_parts(df, column, Some(field))? else {
        return Ok(vec![Vec::new(); df.height()]);
    };
    Ok(offsets.windows(2).map(|w| (w[0] as usize..w[1] as usize).map(|k| values.get(k).map(str::to_string)).collect()).collect())
}

/// The list's offsets and its flattened values (as strings).
fn list_parts(df: &DataFrame, name: &str, field: Option<&str>) -> PolarsResult<Option<(Vec<i64>, StringChunked)>> {
    let Some(c) = column(df, name).filter(|s| matches!(s.dtype(), DataType::List(_))) else {
        return Ok(None);
    };
    let list = c.list()?.rechunk().into_owned();
    let offsets: Vec<i64> = list.offsets()?.as_slice().to_vec();
    let inner = list.get_inner();
    let values = match field {
        Some(f) if matches!(inner.dtype(), DataType::Struct(_)) => match inner.struct_()?.field_by_name(f) {
            Ok(s) if s.dtype() != &DataType::Null => s,
            _ => return Ok(None),
        },
        Some(_) => return Ok(None),
        None if inner.dtype() == &DataType::Null => return Ok(None),
        None => inner,
    };
    let values = if values.dtype() == &DataType::String { values } else { values.cast(&DataType::String)? };
    let values = values.str()?.rechunk().into_owned();
    Ok(Some((offsets, values)))
}
