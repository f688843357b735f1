package opensearch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/opensearch-project/opensearch-go/v4/signer"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
)

// AWS services a request can be signed for.
const (
	// ServiceES is Amazon OpenSearch Service (managed domains).
	ServiceES = "es"
	// ServiceAOSS is Amazon OpenSearch Serverless (collections).
	ServiceAOSS = "aoss"
)

// AWS configures AWS Signature Version 4 request signing with the
// signer opensearch-go provides over the AWS SDK for Go v2
// (signer/awsv2). Credentials come from the SDK's standard chain:
// environment (AWS_ACCESS_KEY_ID…), the shared config and credentials
// files (Profile), web identity (AWS_ROLE_ARN and
// AWS_WEB_IDENTITY_TOKEN_FILE: IRSA on EKS), the ECS container endpoint
// and the EC2 instance role. Nothing secret is configured here.
type AWS struct {
	// Region of the domain or collection, e.g. eu-west-1. Required.
	Region string `json:"region" mapstructure:"region"`
	// Service is "es" (default, OpenSearch Service) or "aoss"
	// (OpenSearch Serverless, which also switches the probe to the calls
	// Serverless answers, probe.go).
	Service string `json:"service" mapstructure:"service"`
	// Profile selects a profile of the shared config files; "" uses
	// AWS_PROFILE or the default.
	Profile string `json:"profile,omitempty" mapstructure:"profile"`
}

var awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// serviceOf returns the configured service, "es" by default.
func (a *AWS) serviceOf() string {
	if a.Service == "" {
		return ServiceES
	}
	return a.Service
}

func (a *AWS) validate(urls []string) error {
	if !awsRegion.MatchString(a.Region) {
		return fmt.Errorf("opensearch: aws.region: %q is not an AWS region such as eu-west-1", a.Region)
	}
	svc := a.serviceOf()
	if svc != ServiceES && svc != ServiceAOSS {
		return fmt.Errorf("opensearch: aws.service: %q is not es or aoss", a.Service)
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("opensearch: urls: %q is not a URL", raw)
		}
		host := u.Hostname()
		if u.Scheme != "https" && !fetch.Loopback(host) {
			return fmt.Errorf("opensearch: aws: %q must be https (signed requests carry credentials)", u.Redacted())
		}
		if strings.HasSuffix(host, ".aoss.amazonaws.com") != (svc == ServiceAOSS) && strings.HasSuffix(host, ".amazonaws.com") {
			return fmt.Errorf("opensearch: aws.service %q does not match the endpoint %s (Serverless endpoints end in .aoss.amazonaws.com and use aoss)", svc, host)
		}
	}
	return nil
}

// serverless reports whether the target is an OpenSearch Serverless
// collection.
func (c *Config) serverless() bool { return c.AWS != nil && c.AWS.serviceOf() == ServiceAOSS }

// newSigner loads the standard AWS credential chain for region and
// profile and returns opensearch-go's SigV4 signer for the service.
// Loading reads only local configuration; credentials are fetched (and
// cached and refreshed by the SDK) when the first request is signed,
// within that request's context.
func newSigner(ctx context.Context, a *AWS) (signer.Signer, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(a.Region)}
	if a.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(a.Profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("opensearch: aws: load the credential chain: %w", err)
	}
	if cfg.Credentials == nil {
		return nil, errors.New("opensearch: aws: no credential provider")
	}
	return newSignerFrom(cfg, a.serviceOf())
}

// newSignerFrom is newSigner over a loaded AWS configuration.
func newSignerFrom(cfg aws.Config, service string) (signer.Signer, error) {
	s, err := awsv2.NewSignerWithService(cfg, service)
	if err != nil {
		return nil, fmt.Errorf("opensearch: aws: %w", err)
	}
	return s, nil
}
