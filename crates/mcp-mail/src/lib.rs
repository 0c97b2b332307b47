//! The MCP server for mail: search, read and compose through the Tamebi app's
//! mail contract. It holds no mail credential.
//!
//! Empty until its issue fills it.
