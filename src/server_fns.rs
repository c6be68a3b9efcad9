//! Server functions: the browser's API. One function per file, each at a fixed endpoint
//! under `/api/` (listed in the README), each returning `AppError` for anything a user sees.

mod ask;
mod follow_answer;
mod get_conversation;
mod get_search_status;
mod get_settings;
mod get_setup;
mod history;
mod list_models;
mod stop_answer;
mod update_settings;

pub use ask::{ask, Ask};
pub use follow_answer::{follow_answer, FollowAnswer};
pub use get_conversation::{get_conversation, GetConversation};
pub use get_search_status::{get_search_status, GetSearchStatus};
pub use get_settings::{get_settings, GetSettings};
pub use get_setup::{get_setup, GetSetup};
pub use history::{
    delete_conversation, get_earlier, get_history, get_shared, open_conversation,
    rename_conversation, share_conversation, DeleteConversation, GetEarlier, GetHistory, GetShared,
    OpenConversation, RenameConversation, ShareConversation, HISTORY_LIMIT,
};
pub use list_models::{list_models, ListModels};
pub use stop_answer::{stop_answer, StopAnswer};
pub use update_settings::{update_settings, UpdateSettings};
