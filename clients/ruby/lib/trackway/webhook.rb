# frozen_string_literal: true

require "base64"
require "json"
require "openssl"

module Trackway
  # Proof that a delivery came from Trackway, was not altered, and is not an old message replayed.
  #
  # With the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
  # which Trackway always sends, the signature covers the message id and the timestamp too, and a
  # timestamp more than the tolerance (5 minutes) from now is refused, so a captured delivery
  # cannot be replayed later. Only without them is `X-Service-Signature` (body only) used.
  module Webhook
    DEFAULT_TOLERANCE = 300

    module_function

    # Checks a delivery against each of `secrets` (pass old and new while a rotation overlaps)
    # and returns the parsed payload (a Hash with string keys); raises WebhookVerificationError
    # otherwise. `raw_body` must be the exact bytes received (`request.raw_post` in Rails,
    # `request.body.read` in Rack), before any JSON parsing. `headers` may use any key case;
    # a Rack env (`HTTP_WEBHOOK_SIGNATURE`) is understood too.
    def verify(raw_body, headers, secrets, now: Time.now.to_i, tolerance: DEFAULT_TOLERANCE)
      secrets = Array(secrets).select { |s| s.is_a?(String) && !s.empty? }
      raise ArgumentError, "Trackway.verify_webhook: no secret given" if secrets.empty?

      body = raw_body.to_s.b
      headers = normalise(headers)
      standard = headers["webhook-signature"]
      service = headers["x-service-signature"]
      verified =
        if standard
          verify_standard(body, headers, standard, secrets, now.to_i, tolerance)
        elsif service
          verify_service(body, service, secrets)
        else
          raise WebhookVerificationError.new("missing_signature",
                                             "No webhook-signature or X-Service-Signature header")
        end
      unless verified
        raise WebhookVerificationError.new("invalid_signature",
                                           "The signature matches none of the given secrets")
      end
      parse(body)
    end

    def verify_standard(body, headers, standard, secrets, now, tolerance)
      id = headers["webhook-id"]
      timestamp = headers["webhook-timestamp"]
      unless id && timestamp&.match?(/\A\d{1,12}\z/)
        raise WebhookVerificationError.new(
          "invalid_timestamp",
          "webhook-id and a numeric webhook-timestamp must accompany webhook-signature"
        )
      end
      if (now - timestamp.to_i).abs > tolerance
        raise WebhookVerificationError.new(
          "timestamp_out_of_tolerance",
          "webhook-timestamp is more than #{tolerance} s from now: refused as a possible replay"
        )
      end
      signatures = standard.split(" ").filter_map do |entry|
        decode64(entry.delete_prefix("v1,")) if entry.start_with?("v1,")
      end
      signed = "#{id}.#{timestamp}.".b + body
      secrets.any? do |secret|
        # The Standard Webhooks key is the base64 after `whsec_`.
        key = decode64(secret.delete_prefix("whsec_"))
        next false if key.nil? || key.empty?

        expected = OpenSSL::HMAC.digest("SHA256", key, signed)
        signatures.any? { |signature| secure_compare(expected, signature) }
      end
    end

    def verify_service(body, service, secrets)
      match = /\Asha256=((?:\h{2})+)\z/.match(service)
      return false unless match

      signature = match[1].downcase
      # X-Service-Signature is keyed with the whole secret string, `whsec_` included.
      secrets.any? do |secret|
        secure_compare(OpenSSL::HMAC.hexdigest("SHA256", secret, body), signature)
      end
    end

    def parse(body)
      payload = JSON.parse(body.dup.force_encoding(Encoding::UTF_8))
      raise JSON::ParserError unless payload.is_a?(Hash)

      payload
    rescue JSON::ParserError
      raise WebhookVerificationError.new("invalid_payload", "The signed body is not a JSON object")
    end

    def decode64(text)
      Base64.strict_decode64(text)
    rescue ArgumentError
      nil
    end

    def secure_compare(a, b)
      a.bytesize == b.bytesize && OpenSSL.fixed_length_secure_compare(a, b)
    end

    # Lower-case names, first value of a list; a Rack env's `HTTP_WEBHOOK_ID` becomes `webhook-id`.
    def normalise(headers)
      out = {}
      headers.to_h.each do |name, value|
        name = name.to_s.downcase
        name = name.delete_prefix("http_").tr("_", "-") if name.start_with?("http_")
        value = value.first if value.is_a?(Array)
        out[name] ||= value if value.is_a?(String)
      end
      out
    end
  end
end
