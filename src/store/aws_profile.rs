//! The AWS command-line tools' shared files: `~/.aws/credentials` and `~/.aws/config` (or
//! `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`), read for one profile: static keys,
//! a session token, the region and the S3 endpoint. SSO, role assumption and credential
//! processes are not supported.

use crate::error::{Error, Result};
use crate::redact::Secret;
use ini::Ini;
use std::path::PathBuf;

/// What a profile says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AwsProfile {
    /// `aws_access_key_id`.
    pub access_key_id: Option<String>,
    /// `aws_secret_access_key`.
    pub secret_access_key: Option<Secret>,
    /// `aws_session_token`.
    pub session_token: Option<Secret>,
    /// `region`.
    pub region: Option<String>,
    /// `endpoint_url`.
    pub endpoint_url: Option<String>,
}

/// The file named by the environment variable `variable`, else `~/.aws/<name>`.
fn shared_file(variable: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".aws").join(name))
}

/// Reads `profile` from the shared files. A profile named explicitly (`explicit`) must exist
/// in one of them; the default one may be missing (`Ok(None)`).
pub fn read(profile: &str, explicit: bool) -> Result<Option<AwsProfile>> {
    let credentials = shared_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    let config = shared_file("AWS_CONFIG_FILE", "config");
    let mut found = None;
    // The config file names sections `[profile NAME]`, except `[default]`.
    let config_section = match profile {
        "default" => "default".to_string(),
        name => format!("profile {name}"),
    };
    for (file, section) in [(config, config_section), (credentials, profile.to_string())] {
        let Some(file) = file.filter(|f| f.is_file()) else {
            continue;
        };
        let ini = Ini::load_from_file(&file).map_err(|e| {
            Error::InvalidArgument(format!("AWS profile file {}: {e}", file.display()))
        })?;
        let Some(values) = ini.section(Some(section.as_str())) else {
            continue;
        };
        let p: &mut AwsProfile = found.get_or_insert_with(AwsProfile::default);
        let get = |key: &str| values.get(key).map(str::to_string);
        // The credentials file wins over the config file for the keys both may hold.
        p.access_key_id = get("aws_access_key_id").or(p.access_key_id.take());
        p.secret_access_key = get("aws_secret_access_key")
            .map(Secret::from)
            .or(p.secret_access_key.take());
        p.session_token = get("aws_session_token")
            .map(Secret::from)
            .or(p.session_token.take());
        p.region = get("region").or(p.region.take());
        p.endpoint_url = get("endpoint_url").or(p.endpoint_url.take());
    }
    if found.is_none() && explicit {
        return Err(Error::InvalidArgument(format!(
            "AWS profile {profile:?} is in neither the credentials nor the config file"
        )));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_profile_from_both_files() {
        let dir = std::env::temp_dir().join(format!("libzarr-aws-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (credentials, config) = (dir.join("credentials"), dir.join("config"));
        std::fs::write(
            &credentials,
            "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = sdefault\n\n\
             [work]\naws_access_key_id=AKWORK\naws_secret_access_key=swork\naws_session_token=tok\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n[profile work]\nregion = us-west-2\n\
             endpoint_url = http://127.0.0.1:9000\naws_access_key_id = AKCONFIG\n",
        )
        .unwrap();
        // SAFETY of the environment: this test is the only one reading these two variables.
        std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &credentials);
        std::env::set_var("AWS_CONFIG_FILE", &config);
        let work = read("work", true).unwrap().unwrap();
        assert_eq!(
            work,
            AwsProfile {
                access_key_id: Some("AKWORK".into()),
                secret_access_key: Some(Secret::from("swork".to_string())),
                session_token: Some(Secret::from("tok".to_string())),
                region: Some("us-west-2".into()),
                endpoint_url: Some("http://127.0.0.1:9000".into()),
            }
        );
        let default = read("default", false).unwrap().unwrap();
        assert_eq!(default.region.as_deref(), Some("eu-west-1"));
        assert_eq!(default.access_key_id.as_deref(), Some("AKDEFAULT"));
        assert!(
            matches!(read("nobody", true), Err(Error::InvalidArgument(m)) if m.contains("nobody"))
        );
        assert_eq!(read("nobody", false).unwrap(), None);
        // A file that is not INI is an error naming it.
        std::fs::write(&config, "[profile work\nregion = x\n").unwrap();
        match read("work", true) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("config"), "{m}"),
            other => panic!("{other:?}"),
        }
        std::env::remove_var("AWS_SHARED_CREDENTIALS_FILE");
        std::env::remove_var("AWS_CONFIG_FILE");
    }
}
