//! storemap-render: draws maps. Web Mercator with slippy-map zoom (zoom 0 = the world in
//! 256 px), an offline basemap from Natural Earth shapes (land, borders, the big lakes, US states,
//! city labels in a TTF font), markers stamped from a pre-rendered sprite, heatmaps, legends, focus maps of
//! one country in an equal-area conic projection, and PNG/JPEG encoding with the requested DPI.
//! Nothing here knows about Node or HTTP; only `served` knows the dataset (it draws the rows a
//! request serves).

mod atlas;
mod basemap;
mod blend;
mod camera;
mod cells;
mod color;
mod credit;
mod encode;
mod error;
mod focus;
mod heatmap;
mod labels;
mod legend;
mod render;
mod served;
mod shapes;
mod streets;
mod text;
mod theme;
pub mod tiles;

pub use atlas::Atlas;
pub use basemap::{BASEMAP_CELL, DEFAULT_BASEMAP_CELL_BYTES};
pub use camera::{Camera, Viewport};
pub use color::parse_hex;
pub use encode::{ImageFormat, DEFAULT_JPEG_QUALITY};
pub use error::{RenderError, Result};
pub use focus::{territories_of, FocusSpec, FOCUS_FILL, FOCUS_OUTLINE, FOCUS_OUTLINE_WIDTH};
pub use labels::LABEL_MIN_POPULATION;
pub use legend::MAX_LEGEND_SHARE;
pub use render::{
    admit, encode_blank, render, render_map, street_ops, MapRequest, MarkerGroup, Rendered, COMPANY_PALETTE, DEFAULT_DPI, DEFAULT_MARKER_RADIUS, DEFAULT_STYLE,
    MAX_MARKER_PIXELS, MAX_SIDE,
};
pub use served::{health_check, render_overlap, render_served, FocusCountry, FocusQuery, MapAnswer, MapQuery, OverlapMapQuery, RendererHealth};
pub use streets::{tile_zoom, Op, Pen, CELL};
pub use theme::{StreetColors, Theme, Themes};
