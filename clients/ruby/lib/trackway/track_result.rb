# frozen_string_literal: true

module Trackway
  # What happened to one tracked event. `Client#track` returns it at once, pending; it is settled
  # when the event's batch is answered — at the latest when `flush` or `close` returns (they
  # return the results they waited for). Until then `pending?` is true and the outcome readers
  # are nil.
  class TrackResult
    attr_reader :event_id, :status, :error, :message, :field, :warnings

    def initialize(event_id)
      @event_id = event_id
      @pending = true
      @ok = false
      @deduplicated = false
      @status = nil
      @error = nil
      @message = nil
      @field = nil
      @warnings = []
    end

    def pending?
      @pending
    end

    # True once the server stored the event (or already had its event_id).
    def ok?
      @ok
    end

    # The server already had this event_id; the first event was kept.
    def deduplicated?
      @deduplicated
    end

    def to_h
      out = { event_id: event_id, pending: pending?, ok: pending? ? nil : ok?, status: status }
      if ok?
        out.merge!(deduplicated: deduplicated?, message: message)
        out[:warnings] = warnings unless warnings.empty?
      elsif !pending?
        out.merge!(error: error, message: message)
        out[:field] = field if field
      end
      out
    end

    def inspect
      "#<Trackway::TrackResult #{to_h}>"
    end

    # @api private
    def settle_ok(deduplicated:, message:, warnings: [])
      @ok = true
      @status = 200
      @deduplicated = deduplicated
      @message = message
      @warnings = warnings
      @pending = false
    end

    # @api private
    def settle_failed(status:, error:, message:, field: nil)
      @ok = false
      @status = status
      @error = error
      @message = message
      @field = field
      @pending = false
    end
  end
end
