# frozen_string_literal: true

require_relative "trackway/version"
require_relative "trackway/errors"
require_relative "trackway/track_result"
require_relative "trackway/transport"
require_relative "trackway/batcher"
require_relative "trackway/client"
require_relative "trackway/resources"
require_relative "trackway/webhook"

# Trackway's official Ruby client: `Trackway::Client.new(api_key:, base_url:)` and
# `Trackway.verify_webhook(raw_body, headers, secrets)`.
module Trackway
  # Checks a webhook delivery and returns its payload (a Hash); raises WebhookVerificationError
  # (with `code`) when it is not genuine. See Trackway::Webhook.verify.
  def self.verify_webhook(raw_body, headers, secrets, now: Time.now.to_i, tolerance: Webhook::DEFAULT_TOLERANCE)
    Webhook.verify(raw_body, headers, secrets, now: now, tolerance: tolerance)
  end
end
