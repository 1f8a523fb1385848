# frozen_string_literal: true

require_relative "lib/trackway/version"

Gem::Specification.new do |spec|
  spec.name = "trackway"
  spec.version = Trackway::VERSION
  spec.summary = "Official Ruby client for Trackway, the server-side event tracking service"
  spec.description = "Batched, gzipped, retried event tracking (POST /v1/track/batch), the " \
                     "pixels and events API, and webhook signature verification. Standard " \
                     "library only."
  spec.authors = ["Trackway"]
  spec.license = "Apache-2.0"
  spec.required_ruby_version = ">= 3.0"
  spec.files = Dir["lib/**/*.rb", "README.md"]
  spec.require_paths = ["lib"]
  spec.metadata["rubygems_mfa_required"] = "true"
end
