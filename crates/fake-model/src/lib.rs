//! A scripted OpenAI-compatible model server.
//!
//! Empty until the orchestrator issue fills it: it will answer
//! `/v1/chat/completions` from a script and record every request.
