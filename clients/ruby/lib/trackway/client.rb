# frozen_string_literal: true

require "json"
require "securerandom"
require "uri"

module Trackway
  # Trackway's API client: batched `track` plus a method for each resource.
  #
  #   client = Trackway::Client.new(api_key: ENV.fetch("TRACKWAY_API_KEY"), base_url: "http://127.0.0.1:8080")
  #   client.track(pixel_id: "px_…", event_name: "Purchase", value: 49.99, currency: "USD")
  #   client.close # sends what is queued (also done at exit)
  #
  # Thread-safe: `track` from any thread; a background thread sends the batches.
  class Client
    attr_reader :base_url, :pixels, :events, :webhooks

    # api_key::          a `tw_live_…` key.
    # base_url::         the server's origin, without `/v1`.
    # max_batch_size::   events per batch, 1 to 1,000.
    # flush_interval::   seconds the oldest queued event may wait for its batch to fill.
    # gzip::             gzip batches.
    # max_retries::      retries after the first attempt (429, 5xx, network errors).
    # retry_base_delay:: seconds, first backoff step, doubled each retry.
    # retry_max_delay::  seconds, longest backoff step.
    # max_retry_wait::   a 429 asking to wait longer than this is reported, not slept on.
    # timeout::          seconds to connect, and for each read and write.
    # on_result::        called once per tracked event with (TrackResult, event), on the batch thread.
    # logger::           a Logger for retries and failures (default none).
    def initialize(api_key:, base_url: "http://127.0.0.1:8080", max_batch_size: 100, flush_interval: 1.0,
                   gzip: true, max_retries: 10, retry_base_delay: 0.2, retry_max_delay: 10.0,
                   max_retry_wait: 60.0, timeout: 30.0, on_result: nil, logger: nil)
      raise ArgumentError, "Trackway: api_key is required" if api_key.nil? || api_key.to_s.empty?

      @base_url = base_url.to_s.chomp("/")
      transport = lambda do
        Transport.new(base_url: @base_url, api_key: api_key.to_s, timeout: timeout.to_f,
                      max_retries: max_retries.to_i, retry_base_delay: retry_base_delay.to_f,
                      retry_max_delay: retry_max_delay.to_f, max_retry_wait: max_retry_wait.to_f,
                      logger: logger)
      end
      # The batch thread has its own connection; API calls share another.
      @transport = transport.call
      @batcher = Batcher.new(transport: transport.call, max_batch_size: max_batch_size,
                             flush_interval: flush_interval, gzip: gzip, on_result: on_result,
                             logger: logger)
      @closed = false
      @pixels = Pixels.new(self)
      @events = Events.new(self)
      @webhooks = Webhooks.new(self)
    end

    # Queues an event (a Hash, symbol or string keys) and returns its TrackResult, pending until
    # the event's batch is answered (at the latest when flush or close returns). Never raises for
    # what the server answers: a refused event settles with `ok? == false`. An `event_id` is
    # made when none is given, so a resent batch is deduplicated.
    def track(event)
      raise Error, "Trackway: track after close" if @closed

      event = Client.with_event_id(event)
      json = Client.encode(event)
      @batcher.enqueue(event, json, TrackResult.new((event[:event_id] || event["event_id"]).to_s))
    end

    # Sends everything queued, waits for the answers, and returns those events' results.
    def flush
      @batcher.flush
    end

    # Flushes, stops the batch thread and refuses further events. Also done at exit.
    def close
      @closed = true
      results = @batcher.close
      @transport.close
      results
    end

    # Events queued or in flight.
    def pending_events
      @batcher.pending
    end

    # What `track` would store for this event and what each destination would be sent, without
    # storing or sending anything (`POST /v1/track/validate`).
    def validate(event)
      request("POST", "/v1/track/validate", body: event, retry_server_errors: true)
    end

    # One stored event (`GET /v1/pixels/{pixel_id}/events/{event_id}`).
    def event(pixel_id, event_id)
      events.get(pixel_id, event_id)
    end

    # Any route, for what has no method yet; answers the parsed JSON (a Hash, string keys).
    # `retry_server_errors`: resend on a 5xx or network error (default for GET, PATCH and DELETE,
    # which are safe to send twice); 429 is always retried. Raises APIError or NetworkError.
    def request(method, path, body: nil, query: nil, retry_server_errors: nil)
      method = method.to_s.upcase
      query = query&.compact
      path = "#{path}?#{URI.encode_www_form(query)}" if query && !query.empty?
      retry_server_errors = %w[GET PATCH DELETE].include?(method) if retry_server_errors.nil?
      @transport.exchange(method, path, body: body.nil? ? nil : Client.encode(body),
                                        retry_server_errors: retry_server_errors).body
    end

    # @api private
    def self.with_event_id(event)
      raise ArgumentError, "Trackway: an event is a Hash" unless event.is_a?(Hash)
      return event unless event[:event_id].nil? && event["event_id"].nil?

      # One key only, even when the caller passed `"event_id" => nil`.
      event.reject { |key, _| key.to_s == "event_id" }.merge(event_id: new_event_id)
    end

    # `evt_` + a UUIDv7: time-ordered (kind to the server's indexes), random enough to be unique.
    def self.new_event_id
      hex = format("%012x", Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)) + SecureRandom.hex(10)
      hex[12] = "7"
      hex[16] = (8 | (hex[16].to_i(16) & 3)).to_s(16)
      "evt_#{hex[0, 8]}-#{hex[8, 4]}-#{hex[12, 4]}-#{hex[16, 4]}-#{hex[20, 12]}"
    end

    # @api private
    def self.encode(value)
      JSON.generate(value)
    rescue JSON::GeneratorError, Encoding::UndefinedConversionError => e
      raise ArgumentError, "Trackway: cannot encode as JSON: #{e.message}"
    end

    # @api private
    def self.escape(segment)
      URI.encode_www_form_component(segment.to_s).gsub("+", "%20")
    end
  end
end
