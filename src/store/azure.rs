//! The Azure Blob Storage client of `az://container/prefix` (also `azure://container/prefix` and
//! `abfs[s]://container@account.dfs.core.windows.net/prefix`), configured as the Azure tools
//! are: `AZURE_STORAGE_ACCOUNT_NAME` / `AZURE_STORAGE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_KEY` /
//! `AZURE_STORAGE_KEY`, `AZURE_STORAGE_SAS_TOKEN`, `AZURE_STORAGE_CONNECTION_STRING`,
//! `AZURE_STORAGE_ENDPOINT`, `AZURE_STORAGE_USE_EMULATOR` (Azurite), and what else
//! object_store's `from_env` reads (`AZURE_CLIENT_ID`, `AZURE_STORAGE_TOKEN`, ...);
//! [`StoreOptions`] override all of it.

use super::options::{env, is_yes, StoreOptions};
use crate::error::{Error, Result};
use crate::redact::Secret;
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};

/// Azurite's account and its published key.
const EMULATOR_ACCOUNT: &str = "devstoreaccount1";
const EMULATOR_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// What an Azure connection string (`AZURE_STORAGE_CONNECTION_STRING`) says.
#[derive(Debug, Default, PartialEq, Eq)]
struct ConnectionString {
    account: Option<String>,
    key: Option<String>,
    sas: Option<String>,
    blob_endpoint: Option<String>,
    protocol: Option<String>,
    suffix: Option<String>,
    development_storage: bool,
}

impl ConnectionString {
    /// Reads `Name=value;...` (names in any case; other services' endpoints ignored).
    fn parse(text: &str) -> Result<ConnectionString> {
        let mut c = ConnectionString::default();
        for (i, part) in text.split(';').map(str::trim).enumerate() {
            if part.is_empty() {
                continue;
            }
            // The part itself may hold a secret: name it by position only.
            let (name, value) = part.split_once('=').ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "AZURE_STORAGE_CONNECTION_STRING: part {} is not Name=value",
                    i + 1
                ))
            })?;
            let value = Some(value.trim().to_string());
            match name.trim().to_ascii_lowercase().as_str() {
                "accountname" => c.account = value,
                "accountkey" => c.key = value,
                "sharedaccesssignature" => c.sas = value,
                "blobendpoint" => c.blob_endpoint = value,
                "defaultendpointsprotocol" => c.protocol = value,
                "endpointsuffix" => c.suffix = value,
                "usedevelopmentstorage" => {
                    c.development_storage = value.is_some_and(|v| is_yes(&v))
                }
                _ => {}
            }
        }
        Ok(c)
    }

    /// The blob endpoint: given, or made from the protocol, the account and the suffix.
    fn endpoint(&self) -> Option<String> {
        if self.blob_endpoint.is_some() {
            return self.blob_endpoint.clone();
        }
        let account = self.account.as_ref()?;
        if self.protocol.is_none() && self.suffix.is_none() {
            return None;
        }
        Some(format!(
            "{}://{account}.blob.{}",
            self.protocol.as_deref().unwrap_or("https"),
            self.suffix.as_deref().unwrap_or("core.windows.net")
        ))
    }
}

/// The Azure client for `authority` (`container`, or `container@account.dfs.core.windows.net`
/// after `abfs[s]://`) of `url`: the options, else the environment variables, else the
/// connection string, else Azurite's defaults when `use_emulator`. Without a key or a SAS
/// token object_store's other credentials apply (service principal, managed identity, ...).
pub fn builder(
    url: &str,
    authority: &str,
    options: &StoreOptions,
) -> Result<MicrosoftAzureBuilder> {
    let invalid = |why: String| Error::InvalidArgument(format!("store URL {url:?}: {why}"));
    let conn = match env("AZURE_STORAGE_CONNECTION_STRING") {
        Some(text) => ConnectionString::parse(&text)?,
        None => ConnectionString::default(),
    };
    let (container, url_account) = match authority.split_once('@') {
        None => (authority, None),
        Some((container, host)) if url.starts_with("abfs") => {
            let account = [".dfs.core.windows.net", ".blob.core.windows.net"]
                .iter()
                .find_map(|suffix| host.strip_suffix(suffix))
                .ok_or_else(|| {
                    invalid(format!(
                        "{host:?} is not ACCOUNT.dfs.core.windows.net or ACCOUNT.blob.core.windows.net"
                    ))
                })?;
            (container, Some(account.to_string()))
        }
        Some(_) => return Err(invalid("container@account is for abfs:// URLs".into())),
    };
    if container.is_empty() {
        return Err(invalid("no container name".into()));
    }
    let use_emulator = options
        .use_emulator
        .or_else(|| env("AZURE_STORAGE_USE_EMULATOR").map(|v| is_yes(&v)))
        .unwrap_or(conn.development_storage);
    let account = url_account
        .or_else(|| options.account.clone())
        .or_else(|| env("AZURE_STORAGE_ACCOUNT_NAME"))
        .or_else(|| env("AZURE_STORAGE_ACCOUNT"))
        .or_else(|| conn.account.clone())
        .or_else(|| use_emulator.then(|| EMULATOR_ACCOUNT.to_string()))
        .ok_or_else(|| {
            invalid(
                "no Azure storage account (the \"account\" option, AZURE_STORAGE_ACCOUNT_NAME \
                 or AZURE_STORAGE_CONNECTION_STRING)"
                    .into(),
            )
        })?;
    // One credential, the first given: options, variables, connection string, emulator.
    let key = |k: &Option<String>| k.clone().map(|k| (AzureConfigKey::AccessKey, k));
    let sas = |s: &Option<String>| s.clone().map(|s| (AzureConfigKey::SasKey, s));
    let exposed = |s: &Option<Secret>| s.as_ref().map(|s| s.expose().to_string());
    let credential = key(&exposed(&options.account_key))
        .or_else(|| sas(&exposed(&options.sas_token)))
        .or_else(|| key(&env("AZURE_STORAGE_ACCOUNT_KEY")))
        .or_else(|| key(&env("AZURE_STORAGE_ACCESS_KEY")))
        .or_else(|| key(&env("AZURE_STORAGE_KEY")))
        .or_else(|| sas(&env("AZURE_STORAGE_SAS_TOKEN")))
        .or_else(|| key(&conn.key))
        .or_else(|| sas(&conn.sas))
        .or_else(|| key(&use_emulator.then(|| EMULATOR_KEY.to_string())));
    let endpoint = options
        .endpoint
        .clone()
        .or_else(|| env("AZURE_STORAGE_ENDPOINT"))
        .or_else(|| conn.endpoint())
        .or_else(|| {
            use_emulator.then(|| {
                let base = env("AZURITE_BLOB_STORAGE_URL");
                let base = base.as_deref().unwrap_or("http://127.0.0.1:10000");
                format!("{}/{account}", base.trim_end_matches('/'))
            })
        });
    // object_store's emulator mode would ignore the endpoint: Azurite is reached as any
    // endpoint with the account in its path (as a connection string's BlobEndpoint says).
    let mut builder = MicrosoftAzureBuilder::from_env()
        .with_use_emulator(false)
        .with_container_name(container)
        .with_account(&account);
    if let Some((config, value)) = credential {
        let kind = match config {
            AzureConfigKey::SasKey => "sas_token",
            _ => "access_key",
        };
        builder = builder
            .with_config(config, value)
            .with_config(AzureConfigKey::CredentialType, kind);
    }
    let allow_http = endpoint.as_ref().is_some_and(|e| e.starts_with("http://"));
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    if let Some(anonymous) = options.anonymous {
        builder = builder.with_skip_signature(anonymous);
    }
    Ok(builder
        .with_client_options(options.client_options(allow_http))
        .with_retry(options.retry_config()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_connection_string() {
        let azurite = ConnectionString::parse(&format!(
            "DefaultEndpointsProtocol=http;AccountName={EMULATOR_ACCOUNT};AccountKey={EMULATOR_KEY};\
             BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://x;"
        ))
        .unwrap();
        assert_eq!(azurite.key.as_deref(), Some(EMULATOR_KEY));
        assert_eq!(
            azurite.endpoint().as_deref(),
            Some("http://127.0.0.1:10000/devstoreaccount1")
        );
        let cloud = ConnectionString::parse(
            "DefaultEndpointsProtocol=https;AccountName=acct;SharedAccessSignature=sv=1&sig=a%3D;\
             EndpointSuffix=core.chinacloudapi.cn",
        )
        .unwrap();
        assert_eq!(cloud.sas.as_deref(), Some("sv=1&sig=a%3D"));
        assert_eq!(
            cloud.endpoint().as_deref(),
            Some("https://acct.blob.core.chinacloudapi.cn")
        );
        assert!(
            ConnectionString::parse("UseDevelopmentStorage=true")
                .unwrap()
                .development_storage
        );
        match ConnectionString::parse("AccountName=a;secret") {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("part 2") && !m.contains("secret"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}
