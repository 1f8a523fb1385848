# frozen_string_literal: true

module Trackway
  # Every error this client raises is a Trackway::Error, so one rescue covers them all.
  class Error < StandardError; end

  # The server answered with an error (`{error, message, field?}`), after any retries.
  # `message` is the server's message, e.g. "Missing required field: pixel_id".
  class APIError < Error
    # HTTP status of the final answer.
    attr_reader :status
    # The short name, e.g. "Invalid request", "Not found", "Rate limit exceeded".
    attr_reader :error
    # The field at fault, when one is.
    attr_reader :field
    # Seconds to wait, on a 429.
    attr_reader :retry_after
    # The whole error body as parsed (nil when it was not JSON).
    attr_reader :body

    def initialize(status:, error:, message:, field: nil, retry_after: nil, body: nil)
      super(message)
      @status = status
      @error = error
      @field = field
      @retry_after = retry_after
      @body = body
    end

    def self.from_response(status, body)
      body = nil unless body.is_a?(Hash)
      text = ->(key) { body&.fetch(key, nil).is_a?(String) ? body[key] : nil }
      new(
        status: status,
        error: text.call("error") || "HTTP #{status}",
        message: text.call("message") || "HTTP #{status}",
        field: text.call("field"),
        retry_after: body&.fetch("retry_after", nil).is_a?(Integer) ? body["retry_after"] : nil,
        body: body
      )
    end
  end

  # The request got no complete answer (connection refused or reset, timeout), after any retries.
  class NetworkError < Error; end

  # Trackway.verify_webhook refused a delivery: answer it with 400 and do not act on it.
  # `code` says why, as one of the codes every Trackway client uses: "missing_signature",
  # "invalid_timestamp", "timestamp_out_of_tolerance", "invalid_signature", "invalid_payload".
  class WebhookVerificationError < Error
    attr_reader :code

    def initialize(code, message)
      super(message)
      @code = code
    end
  end
end
