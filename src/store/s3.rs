//! The S3 client of `s3://bucket/prefix` (any S3-compatible server), configured as the AWS
//! tools are: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` /
//! `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_S3`; an `http://` endpoint
//! allows plain HTTP; requests are path-style), `AWS_NO_SIGN_REQUEST=YES` for anonymous reads,
//! and `AWS_PROFILE` with the shared files (`aws_profile.rs`); [`StoreOptions`] override all
//! of it.

use super::aws_profile;
use super::options::{env, is_yes, StoreOptions};
use crate::error::Result;
use object_store::aws::AmazonS3Builder;

/// The S3 client for `bucket`: the environment (`AWS_*`), then the AWS profile (`profile`
/// option, else `AWS_PROFILE`, else `default`; its keys only when the environment has none or
/// the profile was named in the options), then the explicit options.
pub fn builder(bucket: &str, options: &StoreOptions) -> Result<AmazonS3Builder> {
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let named = options.profile.clone().or_else(|| env("AWS_PROFILE"));
    let profile = aws_profile::read(named.as_deref().unwrap_or("default"), named.is_some())?
        .unwrap_or_default();
    let use_profile_keys = options.profile.is_some() || env("AWS_ACCESS_KEY_ID").is_none();
    let keys = match (&options.access_key_id, &options.secret_access_key) {
        (Some(id), Some(secret)) => Some((id, secret, &options.session_token)),
        _ => match (&profile.access_key_id, &profile.secret_access_key) {
            (Some(id), Some(secret)) if use_profile_keys => {
                Some((id, secret, &profile.session_token))
            }
            _ => None,
        },
    };
    if let Some((id, secret, token)) = keys {
        builder = builder
            .with_access_key_id(id)
            .with_secret_access_key(secret.expose());
        if let Some(token) = token {
            builder = builder.with_token(token.expose());
        }
    }
    let region = options
        .region
        .clone()
        .or_else(|| env("AWS_REGION"))
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .or(profile.region);
    if let Some(region) = region {
        builder = builder.with_region(region);
    }
    let endpoint = options
        .endpoint
        .clone()
        .or_else(|| env("AWS_ENDPOINT_URL_S3"))
        .or_else(|| env("AWS_ENDPOINT_URL"))
        .or_else(|| env("AWS_ENDPOINT"))
        .or(profile.endpoint_url);
    let allow_http = endpoint.as_ref().is_some_and(|e| e.starts_with("http://"));
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    let anonymous = options
        .anonymous
        .unwrap_or_else(|| env("AWS_NO_SIGN_REQUEST").is_some_and(|v| is_yes(&v)));
    if anonymous {
        builder = builder.with_skip_signature(true);
    }
    if let Some(virtual_hosted) = options.virtual_hosted_style {
        builder = builder.with_virtual_hosted_style_request(virtual_hosted);
    }
    Ok(builder
        .with_client_options(options.client_options(allow_http))
        .with_retry(options.retry_config()))
}
