//! storemap-render: draws maps. Web Mercator with slippy-map zoom (zoom 0 = the world in
//! 256 px), an offline basemap from Natural Earth shapes (land, borders, US states, city labels
//! in a TTF font), markers stamped from a pre-rendered sprite, heatmaps, legends, focus maps of
//! one country in an equal-area conic projection, and PNG/JPEG encoding with the requested DPI.
//! Nothing here knows about Node, HTTP or the dataset.

mod basemap;
mod camera;
mod color;
mod encode;
mod error;
mod focus;
mod heatmap;
mod labels;
mod legend;
mod render;
mod text;
mod theme;

pub use basemap::{Basemap, LABEL_MIN_POPULATION};
pub use camera::{Camera, Viewport};
pub use color::parse_hex;
pub use encode::ImageFormat;
pub use error::{RenderError, Result};
pub use focus::{inset_frames, territories_of, FocusSpec};
pub use render::{admit, encode_blank, render, MapRequest, MarkerGroup, COMPANY_PALETTE, MAX_MARKER_PIXELS, MAX_SIDE};
pub use theme::{Theme, Themes};
