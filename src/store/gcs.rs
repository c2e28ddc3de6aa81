//! The Google Cloud Storage client of `gs://bucket/prefix`, configured as Google's tools are:
//! `GOOGLE_APPLICATION_CREDENTIALS` (a service account key or an authorized user file, else
//! gcloud's application default credentials, else the metadata server), `GOOGLE_SERVICE_ACCOUNT`
//! (a service account key file), and `STORAGE_EMULATOR_HOST` (an emulator: its base URL,
//! `http://` when it names no scheme, and unsigned requests), with what else object_store's
//! `from_env` reads (`GOOGLE_SERVICE_ACCOUNT_KEY`, `GOOGLE_BASE_URL`, ...); [`StoreOptions`]
//! override all of it.

use super::options::{env, StoreOptions};
use crate::error::Result;
use object_store::gcp::{GcpCredential, GoogleCloudStorageBuilder};
use object_store::StaticCredentialProvider;
use std::sync::Arc;

/// The GCS client for `bucket`.
pub fn builder(bucket: &str, options: &StoreOptions) -> Result<GoogleCloudStorageBuilder> {
    let mut builder = GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
    let emulator = env("STORAGE_EMULATOR_HOST").map(|host| match host.contains("://") {
        true => host,
        false => format!("http://{host}"),
    });
    let endpoint = options
        .endpoint
        .clone()
        .or_else(|| env("GOOGLE_BASE_URL"))
        .or_else(|| emulator.clone());
    let allow_http = endpoint.as_ref().is_some_and(|e| e.starts_with("http://"));
    if let Some(endpoint) = endpoint {
        builder = builder.with_base_url(endpoint.trim_end_matches('/'));
    }
    if let Some(path) = &options.service_account_path {
        builder = builder.with_service_account_path(path);
    }
    // Emulators take no credentials (google-cloud-storage sends anonymous ones). object_store
    // 0.14 skips signing only its reads: its writes get an empty token rather than one from
    // the metadata server.
    let emulated = emulator.is_some() && options.service_account_path.is_none();
    if options.anonymous.unwrap_or(emulated) {
        let empty = GcpCredential {
            bearer: String::new(),
        };
        builder = builder
            .with_skip_signature(true)
            .with_credentials(Arc::new(StaticCredentialProvider::new(empty)));
    }
    Ok(builder
        .with_client_options(options.client_options(allow_http))
        .with_retry(options.retry_config()))
}
