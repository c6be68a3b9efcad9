//! Server functions: the browser's API. One function per file, each at a fixed endpoint
//! under `/api/` (listed in the README), each returning `AppError` for anything a user sees.

mod get_search_status;
mod get_settings;
mod update_settings;

pub use get_search_status::{get_search_status, GetSearchStatus};
pub use get_settings::{get_settings, GetSettings};
pub use update_settings::{update_settings, UpdateSettings};
