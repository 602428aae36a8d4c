//! Parquet writing for the Overture and Foursquare writers: the file (polars-parquet's Arrow
//! writer), and the few column shapes they build (strings, structs, one-element lists).

use std::path::Path;

use polars_arrow::array::{Array, BinaryViewArray, ListArray, PrimitiveArray, StructArray, Utf8ViewArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, ArrowSchema, Field};
use polars_arrow::offset::{Offsets, OffsetsBuffer};
use polars_arrow::record_batch::RecordBatchT;
use polars_arrow::types::NativeType;
use polars_error::PolarsResult;
use polars_parquet::write::{
    get_dtype_encoding, schema_to_metadata_key, CompressionOptions, FileWriter, KeyValue, RowGroupIterator, StatisticsOptions, Version, WriteOptions,
};

use crate::error::{IngestError, Result};

/// A named column.
pub type Column = (Field, Box<dyn Array>);

/// How a file is cut and what its footer carries beyond the columns.
pub struct Layout {
    pub row_group_rows: usize,
    /// Min, max and null count per column chunk (Overture writes them; a cut by area needs them).
    pub statistics: bool,
    /// Extra footer entries (GeoParquet's `geo`).
    pub metadata: Vec<(String, String)>,
}

impl Default for Layout {
    /// polars' defaults, which the files were written with before.
    fn default() -> Self {
        Layout { row_group_rows: 512 * 512, statistics: true, metadata: Vec::new() }
    }
}

pub(super) fn write_parquet(path: &Path, columns: PolarsResult<Vec<Column>>) -> Result<()> {
    let name = path.display().to_string();
    let columns = columns.map_err(|e| IngestError::file(&name, e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
    }
    write_columns(path, columns, &Layout::default())
}

/// Writes `columns` (all of one length) to `path`, Snappy-compressed, in row groups of
/// `layout.row_group_rows`, the Arrow schema in the footer as Arrow writers put it.
pub fn write_columns(path: &Path, columns: Vec<Column>, layout: &Layout) -> Result<()> {
    let len = columns.first().map_or(0, |c| c.1.len());
    let (fields, arrays): (Vec<Field>, Vec<Box<dyn Array>>) = columns.into_iter().unzip();
    let step = layout.row_group_rows.max(1);
    let groups = (0..len).step_by(step).map(|start| arrays.iter().map(|a| a.sliced(start, step.min(len - start))).collect()).collect();
    write_groups(path, fields, groups, layout)
}

/// Writes each of `groups` (one array per field, all of one length) as a row group.
pub fn write_groups(path: &Path, fields: Vec<Field>, groups: Vec<Vec<Box<dyn Array>>>, layout: &Layout) -> Result<()> {
    let name = path.display().to_string();
    let fail = |e: polars_error::PolarsError| IngestError::file(&name, e);
    let schema: ArrowSchema = fields.into_iter().map(|f| (f.name.clone(), f)).collect();
    let options = WriteOptions {
        statistics: if layout.statistics { StatisticsOptions::full() } else { StatisticsOptions::empty() },
        compression: CompressionOptions::Snappy,
        version: Version::V1,
        data_page_size: None,
    };
    let schema_ref = std::sync::Arc::new(schema.clone());
    let rows: Vec<usize> = groups.iter().map(|g| g.first().map_or(0, |a| a.len())).collect();
    let batches = groups.into_iter().zip(&rows).map(|(arrays, &n)| Ok(RecordBatchT::new(n, schema_ref.clone(), arrays)));
    let encodings = schema.iter_values().map(|f| get_dtype_encoding(&f.dtype)).collect();
    let row_groups = RowGroupIterator::try_new(batches, &schema, options, encodings).map_err(fail)?;
    let file = std::fs::File::create(path).map_err(|e| IngestError::io(&name, e))?;
    let mut writer = FileWriter::try_new(std::io::BufWriter::new(file), schema.clone(), options).map_err(fail)?;
    for (group, &n) in row_groups.zip(&rows) {
        writer.write(n as u64, group.map_err(fail)?).map_err(fail)?;
    }
    let mut footer = vec![schema_to_metadata_key(&schema)];
    footer.extend(layout.metadata.iter().map(|(k, v)| KeyValue { key: k.clone(), value: Some(v.clone()) }));
    writer.end(Some(footer)).map_err(fail)?;
    use std::io::Write;
    writer.into_inner().flush().map_err(|e| IngestError::io(&name, e))?;
    Ok(())
}

pub(super) fn strs(name: &str, v: Vec<String>) -> Column {
    (Field::new(name.into(), ArrowDataType::Utf8View, true), Utf8ViewArray::from_slice_values(&v).boxed())
}
pub(super) fn opt_strs(name: &str, v: Vec<Option<String>>) -> Column {
    (Field::new(name.into(), ArrowDataType::Utf8View, true), Utf8ViewArray::from_slice(&v).boxed())
}
pub(super) fn numbers<T: NativeType>(name: &str, v: Vec<T>) -> Column {
    let a = PrimitiveArray::from_vec(v);
    (Field::new(name.into(), a.dtype().clone(), true), a.boxed())
}
pub(super) fn binaries(name: &str, v: &[Vec<u8>]) -> Column {
    (Field::new(name.into(), ArrowDataType::BinaryView, true), BinaryViewArray::from_slice_values(v).boxed())
}
/// A struct column of `fields`; a row is null where `valid` says so.
pub(super) fn structs(name: &str, fields: Vec<Column>, valid: Option<Vec<bool>>) -> Column {
    let len = fields.first().map_or(0, |f| f.1.len());
    let (fields, values): (Vec<Field>, Vec<Box<dyn Array>>) = fields.into_iter().unzip();
    let dtype = ArrowDataType::Struct(fields);
    let validity = valid.map(Bitmap::from_iter);
    (Field::new(name.into(), dtype.clone(), true), StructArray::new(dtype, len, values, validity).boxed())
}
/// Each row's value as a one-element list (every generated row has exactly one address,
/// one source record and one category label), or a null list where `valid` says so.
pub(super) fn singleton_lists((field, values): Column, valid: Option<Vec<bool>>) -> Column {
    let n = values.len();
    let lengths = (0..n).map(|i| valid.as_ref().map_or(1, |v| v[i] as usize));
    let offsets: OffsetsBuffer<i64> = Offsets::<i64>::try_from_lengths(lengths).expect("offsets fit in i64").into();
    let validity = valid.map(Bitmap::from_iter);
    // A null list holds no element: its value is dropped from the flattened values.
    let values = match &validity {
        Some(v) => {
            let keep: Vec<usize> = v.iter().enumerate().filter(|(_, b)| *b).map(|(i, _)| i).collect();
            take(values.as_ref(), &keep)
        }
        None => values,
    };
    let item = Field::new("item".into(), field.dtype.clone(), true);
    let dtype = ArrowDataType::LargeList(Box::new(item));
    (Field::new(field.name.clone(), dtype.clone(), true), ListArray::<i64>::new(dtype, offsets, values, validity).boxed())
}

/// The rows `keep` of a string array (the one shape `singleton_lists` drops rows of).
fn take(a: &dyn Array, keep: &[usize]) -> Box<dyn Array> {
    let s = a.as_any().downcast_ref::<Utf8ViewArray>().expect("lists of strings");
    Utf8ViewArray::from_slice(keep.iter().map(|&i| s.get(i)).collect::<Vec<_>>()).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::parquet::{f64_col, list_first_str, str_col, struct_str, ParquetFile};
    use polars_arrow::array::StaticArray;

    /// Seven rows in row groups of three, read back through the importers' reader: each group
    /// a frame starting at its file row, null structs and null lists read as missing values.
    #[test]
    fn written_row_groups_read_back_value_for_value() {
        let ids: Vec<String> = (0..7).map(|i| format!("id{i}")).collect();
        let names: Vec<Option<String>> = (0..7).map(|i| (i % 3 != 1).then(|| format!("name {i}"))).collect();
        let has_brand: Vec<bool> = (0..7).map(|i| i % 2 == 0).collect();
        let brands: Vec<Option<String>> = (0..7).map(|i| Some(format!("brand {i}"))).collect();
        let has_phone: Vec<bool> = (0..7).map(|i| i != 3).collect();
        let phones: Vec<Option<String>> = (0..7).map(|i| (i != 3).then(|| format!("+41 {i}"))).collect();
        let lat: Vec<f32> = (0..7).map(|i| i as f32 * 0.5).collect();
        let columns = vec![
            strs("id", ids.clone()),
            opt_strs("name", names.clone()),
            structs("brand", vec![opt_strs("name", brands.clone())], Some(has_brand.clone())),
            singleton_lists(opt_strs("phones", phones.clone()), Some(has_phone.clone())),
            numbers("lat", lat.clone()),
        ];
        let dir = std::env::temp_dir().join(format!("storemap-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("groups.parquet");
        write_columns(&path, columns, &Layout { row_group_rows: 3, ..Layout::default() }).unwrap();

        let file = ParquetFile::open(&path).unwrap();
        assert_eq!(file.row_groups(), 3);
        let mut seen = 0;
        for g in 0..3 {
            let frame = file.frame(g);
            assert_eq!(frame.first_row, seen);
            let (id, name, brand, phone) = (
                str_col(&frame, "id").unwrap(),
                str_col(&frame, "name").unwrap(),
                struct_str(&frame, "brand", "name").unwrap(),
                list_first_str(&frame, "phones", None).unwrap(),
            );
            let lat_read = f64_col(&frame, "lat").unwrap().unwrap();
            for i in 0..frame.height() {
                let row = seen + i;
                assert_eq!(id.get(i), Some(ids[row].as_str()));
                assert_eq!(name.get(i), names[row].as_deref());
                assert_eq!(brand.get(i), if has_brand[row] { brands[row].as_deref() } else { None }, "row {row}");
                assert_eq!(phone.get(i), if has_phone[row] { phones[row].as_deref() } else { None }, "row {row}");
                assert_eq!(lat_read.get(i), Some(lat[row] as f64));
            }
            assert!(str_col(&frame, "no such column").unwrap().get(0).is_none());
            seen += frame.height();
        }
        assert_eq!(seen, 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
