//! The MCP server for files, calendar, contacts and Deck.
//!
//! Empty until its issue fills it. It is the only place a Nextcloud DAV/OCS
//! client may live, and it spends only the user's own token.
