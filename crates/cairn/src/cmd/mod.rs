pub mod demo;
pub mod ingest;
pub mod scan;
pub mod sync;
