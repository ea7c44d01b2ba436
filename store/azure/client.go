package azure

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store/driver"
)

// The conventional environment of Azure's own tools, read when the config gives no
// credentials.
const (
	EnvAccount          = "AZURE_STORAGE_ACCOUNT"
	EnvKey              = "AZURE_STORAGE_KEY"
	EnvSASToken         = "AZURE_STORAGE_SAS_TOKEN"
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
)

// The development account of Azurite and the storage emulator, which
// UseDevelopmentStorage=true names. Its key is published, not a secret.
const (
	devAccount  = "devstoreaccount1"
	devKey      = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devBlobPort = "10000"
)

// Authentication modes.
const (
	modeSharedKey = "shared key"
	modeSAS       = "SAS token"
	modeAnonymous = "anonymous"
)

// creds is how a Container authenticates, and where that came from.
type creds struct {
	mode   string
	source string       // the config field or environment variable that gave them
	key    secret.Value // the account key (shared key)
	sas    secret.Value // the SAS query, without its leading '?'
	// sasExpiry is the SAS token's signed expiry (se), zero when it has none.
	sasExpiry time.Time
	// endpoint is the account's blob service URL named by a connection string, or "".
	endpoint string
}

// resolveCreds returns the credentials cfg names, else those of the conventional
// environment, in this order: the config (anonymous, account_key, sas_token), then
// AZURE_STORAGE_CONNECTION_STRING, then AZURE_STORAGE_KEY, then AZURE_STORAGE_SAS_TOKEN.
func resolveCreds(loc driver.Location, o *Options, c *driver.Common) (creds, error) {
	switch {
	case o.Anonymous:
		return creds{mode: modeAnonymous, source: "anonymous"}, nil
	case o.AccountKey != "":
		v, err := c.Resolve("account_key", o.AccountKey)
		if err != nil {
			return creds{}, err
		}
		return keyCreds("account_key", v.Reveal())
	case o.SASToken != "":
		v, err := c.Resolve("sas_token", o.SASToken)
		if err != nil {
			return creds{}, err
		}
		return sasCreds("sas_token", v.Reveal())
	}
	return envCreds(loc, c.Env)
}

func envCreds(loc driver.Location, getenv func(string) string) (creds, error) {
	if cs := getenv(EnvConnectionString); cs != "" {
		return connectionStringCreds(loc, cs)
	}
	key, sas := getenv(EnvKey), getenv(EnvSASToken)
	if acct := getenv(EnvAccount); acct != "" && acct != loc.Account && (key != "" || sas != "") {
		return creds{}, &driver.Error{Op: "config", Key: EnvAccount, Kind: driver.ErrCredentialConflict,
			Err: fmt.Errorf("%s names account %s, but the URL names account %s: the credentials in the environment are for another account", EnvAccount, acct, loc.Account)}
	}
	switch {
	case key != "":
		return keyCreds(EnvKey, key)
	case sas != "":
		return sasCreds(EnvSASToken, sas)
	}
	return creds{}, &driver.Error{Op: "config", Key: loc.String(), Kind: driver.ErrConfig,
		Err: fmt.Errorf("no Azure credentials for account %s: give account_key or sas_token (as references), set %s, %s+%s or %s, or use anonymous for a public container",
			loc.Account, EnvConnectionString, EnvAccount, EnvKey, EnvSASToken)}
}

// keyCreds checks that key is an account key (base64) without ever printing it.
func keyCreds(field, key string) (creds, error) {
	key = strings.TrimSpace(key)
	if b, err := base64.StdEncoding.DecodeString(key); err != nil || len(b) == 0 {
		return creds{}, &driver.Error{Op: "config", Key: field, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s is not an Azure account key (want the base64 key the portal shows)", field)}
	}
	return creds{mode: modeSharedKey, source: field, key: secret.New(key)}, nil
}

// sasCreds checks that tok is a SAS token (a query string with sv and sig), with or without
// its leading '?'. The error names field, never the token or any part of it.
func sasCreds(field, tok string) (creds, error) {
	tok = strings.TrimPrefix(strings.TrimSpace(tok), "?")
	q, err := url.ParseQuery(tok)
	if err != nil || tok == "" || strings.ContainsAny(tok, " \t\r\n#?") || q.Get("sig") == "" || q.Get("sv") == "" {
		return creds{}, &driver.Error{Op: "config", Key: field, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s is not a SAS token: want a query string such as sv=…&se=…&sp=…&sig=… (with or without the leading '?')", field)}
	}
	c := creds{mode: modeSAS, source: field, sas: secret.New(tok)}
	if se := q.Get("se"); se != "" {
		c.sasExpiry = parseSASTime(se)
	}
	return c, nil
}

// parseSASTime parses a SAS time (ISO 8601 in UTC, to the second or the day); zero if it
// cannot.
func parseSASTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// connectionStringCreds reads an Azure storage connection string
// (AccountName=…;AccountKey=…;BlobEndpoint=…, or UseDevelopmentStorage=true).
func connectionStringCreds(loc driver.Location, cs string) (creds, error) {
	f, err := parseConnectionString(cs)
	if err != nil {
		return creds{}, err
	}
	if strings.EqualFold(f["usedevelopmentstorage"], "true") {
		host := "http://127.0.0.1"
		if p := f["developmentstorageproxyuri"]; p != "" {
			host = strings.TrimSuffix(p, "/")
		}
		f["accountname"], f["accountkey"] = devAccount, devKey
		f["blobendpoint"] = host + ":" + devBlobPort + "/" + devAccount
	}
	if a := f["accountname"]; a != "" && a != loc.Account {
		return creds{}, &driver.Error{Op: "config", Key: EnvConnectionString, Kind: driver.ErrCredentialConflict,
			Err: fmt.Errorf("%s is for account %s, but the URL names account %s", EnvConnectionString, a, loc.Account)}
	}
	var c creds
	switch {
	case f["accountkey"] != "":
		c, err = keyCreds(EnvConnectionString, f["accountkey"])
	case f["sharedaccesssignature"] != "":
		c, err = sasCreds(EnvConnectionString, f["sharedaccesssignature"])
	default:
		return creds{}, &driver.Error{Op: "config", Key: EnvConnectionString, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s has neither AccountKey nor SharedAccessSignature", EnvConnectionString)}
	}
	if err != nil {
		return creds{}, err
	}
	c.endpoint = f["blobendpoint"]
	if c.endpoint == "" && (f["endpointsuffix"] != "" || f["defaultendpointsprotocol"] != "") {
		proto, suffix := f["defaultendpointsprotocol"], f["endpointsuffix"]
		if proto == "" {
			proto = "https"
		}
		if suffix == "" {
			suffix = "core.windows.net"
		}
		c.endpoint = proto + "://" + loc.Account + ".blob." + suffix
	}
	return c, nil
}

// parseConnectionString splits Key=Value pairs separated by ';' (a value may hold '=', as a
// base64 key does). Keys are lowercased. Errors never quote the string.
func parseConnectionString(cs string) (map[string]string, error) {
	f := map[string]string{}
	for i, seg := range strings.Split(cs, ";") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		k, v, ok := strings.Cut(seg, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, &driver.Error{Op: "config", Key: EnvConnectionString, Kind: driver.ErrConfig,
				Err: fmt.Errorf("%s is not a connection string: part %d is not Key=Value", EnvConnectionString, i+1)}
		}
		f[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if len(f) == 0 {
		return nil, &driver.Error{Op: "config", Key: EnvConnectionString, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s is empty", EnvConnectionString)}
	}
	return f, nil
}

// serviceURL returns the account's blob service URL, without a trailing '/': the configured
// endpoint path-style ({endpoint}/{account}), unless its host is already the account's own
// ({account}.…); else a connection string's endpoint; else https://{account}.blob.core.windows.net.
// An endpoint from the environment passes the same checks as a configured one.
func serviceURL(loc driver.Location, o *Options, common *driver.Common, c creds) (string, error) {
	if o.Endpoint != "" {
		ep := strings.TrimSuffix(o.Endpoint, "/")
		if u, err := url.Parse(ep); err == nil && strings.HasPrefix(strings.ToLower(u.Hostname()), loc.Account+".") {
			return ep, nil
		}
		return ep + "/" + loc.Account, nil
	}
	if c.endpoint != "" {
		if err := common.CheckEndpointWaived(c.source, c.endpoint, o.waivers()); err != nil {
			return "", err
		}
		return strings.TrimSuffix(c.endpoint, "/"), nil
	}
	return "https://" + loc.Account + ".blob.core.windows.net", nil
}

// newServiceClient builds the SDK client for the account's blob service: the SDK's retries
// off (the store's RetryPolicy is the only one), the HTTP client of driver.NewHTTPClient
// asking for every answer as stored (asIs), and the credentials c. Its NewContainerClient
// carries the same credentials and options.
func newServiceClient(serviceURL, account string, c creds, p *driver.RetryPolicy) (*service.Client, error) {
	opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: asIs{driver.NewHTTPClient(p)},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
	switch c.mode {
	case modeSharedKey:
		cred, err := service.NewSharedKeyCredential(account, c.key.Reveal())
		if err != nil {
			return nil, errors.New("the account key is not valid base64")
		}
		return service.NewClientWithSharedKeyCredential(serviceURL+"/", cred, opts)
	case modeSAS:
		return service.NewClientWithNoCredential(serviceURL+"/?"+c.sas.Reveal(), opts)
	}
	return service.NewClientWithNoCredential(serviceURL+"/", opts)
}

// validContainer reports whether s is a valid container name: 3 to 63 lowercase letters, digits
// and single dashes, starting and ending with a letter or digit, or $root or $web.
func validContainer(s string) bool {
	if s == "$root" || s == "$web" {
		return true
	}
	return len(s) >= 3 && len(s) <= 63 && s[0] != '-' && s[len(s)-1] != '-' &&
		!strings.Contains(s, "--") && strings.Trim(s, lowerDigits+"-") == ""
}

const lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"

// validAccount reports whether s is a valid storage account name: 3 to 24 lowercase letters
// and digits.
func validAccount(s string) bool {
	return len(s) >= 3 && len(s) <= 24 && strings.Trim(s, lowerDigits) == ""
}

// asIs sends each request asking for no content coding (Accept-Encoding: identity). Azure
// never compresses an answer itself, but Go's transport, left to ask for gzip on its own,
// would decompress a blob stored with Content-Encoding: gzip and return other bytes than the
// ones stored, without that header.
type asIs struct{ hc *http.Client }

func (a asIs) Do(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	return a.hc.Do(req)
}
