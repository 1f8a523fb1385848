# frozen_string_literal: true

module Trackway
  # `client.pixels`: the account's pixels. Answers are the API's JSON as Hashes (string keys).
  class Pixels
    # @api private
    def initialize(client)
      @client = client
    end

    # {"pixels" => [...], "total" => n, "limit" => n, "offset" => n}
    def list(limit: nil, offset: nil)
      @client.request("GET", "/v1/pixels", query: { limit: limit, offset: offset })
    end

    # Retried only on 429: a create resent after a lost answer could create twice.
    def create(name:, domain:, **attributes)
      @client.request("POST", "/v1/pixels", body: { name: name, domain: domain, **attributes },
                                            retry_server_errors: false)
    end

    def get(pixel_id)
      @client.request("GET", "/v1/pixels/#{Client.escape(pixel_id)}")
    end

    # Changes name:, domain:, tracking_domain: or status: ("active" | "paused").
    def update(pixel_id, **attributes)
      @client.request("PATCH", "/v1/pixels/#{Client.escape(pixel_id)}", body: attributes)
    end
  end

  # `client.events`: reading stored events, and sending one event unbatched.
  class Events
    # @api private
    def initialize(client)
      @client = client
    end

    # One page, newest first: {"events" => [...], "total" => n, "limit" => n, "offset" => n}.
    # Query: limit:, offset:, start_date:, end_date:, event_name: …
    def list(pixel_id, **query)
      @client.request("GET", path(pixel_id), query: query)
    end

    # Every page of `list`, fetched as the loop asks for it (an Enumerator without a block).
    def pages(pixel_id, **query)
      return enum_for(:pages, pixel_id, **query) unless block_given?

      offset = query.fetch(:offset, 0).to_i
      loop do
        page = list(pixel_id, **query.merge(offset: offset))
        yield page
        count = page.fetch("events", []).size
        offset += count
        break if count.zero? || offset >= page.fetch("total", 0).to_i
      end
    end

    # Every matching event, newest first, across all pages: `client.events.each(pixel_id) { … }`,
    # or an Enumerator without a block (`client.events.each(pixel_id).count`).
    #
    # Pages are newest first by offset, so events stored while the loop runs push older ones
    # down: the next page may start with events already yielded. Those are skipped (compared
    # with the previous page), so each event is yielded once as long as fewer than a page's
    # worth arrive between two pages.
    def each(pixel_id, **query)
      return enum_for(:each, pixel_id, **query) unless block_given?

      previous = {}
      pages(pixel_id, **query) do |page|
        seen = {}
        page.fetch("events", []).each do |event|
          seen[event["event_id"]] = true
          yield event unless previous.key?(event["event_id"])
        end
        previous = seen
      end
    end
    alias iterate each

    # One stored event with its forwarding entries.
    def get(pixel_id, event_id)
      @client.request("GET", "#{path(pixel_id)}/#{Client.escape(event_id)}")
    end

    # One event at once, unbatched (`POST /v1/track`); an `event_id` is made when none is given,
    # so the retries of a 5xx or network error store it once.
    def track(event)
      @client.request("POST", "/v1/track", body: Client.with_event_id(event), retry_server_errors: true)
    end

    private

    def path(pixel_id)
      "/v1/pixels/#{Client.escape(pixel_id)}/events"
    end
  end

  # `client.webhooks`: the account's webhook endpoints (checking a delivery is
  # Trackway.verify_webhook).
  class Webhooks
    # @api private
    def initialize(client)
      @client = client
    end

    def list
      @client.request("GET", "/v1/webhooks")
    end

    # The answer's "secret" is shown this once. Retried only on 429.
    def create(url:, **attributes)
      @client.request("POST", "/v1/webhooks", body: { url: url, **attributes }, retry_server_errors: false)
    end

    def get(webhook_id)
      @client.request("GET", "/v1/webhooks/#{Client.escape(webhook_id)}")
    end

    # url:, events:, description:, enabled:
    def update(webhook_id, **attributes)
      @client.request("PATCH", "/v1/webhooks/#{Client.escape(webhook_id)}", body: attributes)
    end

    def delete(webhook_id)
      @client.request("DELETE", "/v1/webhooks/#{Client.escape(webhook_id)}")
    end

    # A new secret (shown this once); the old one keeps signing beside it for 24 hours.
    def rotate_secret(webhook_id)
      @client.request("POST", "/v1/webhooks/#{Client.escape(webhook_id)}/rotate-secret",
                      retry_server_errors: false)
    end
  end
end
