# frozen_string_literal: true

require "zlib"

module Trackway
  # @api private
  # The queue behind `Client#track`: events wait until a batch is full (by count or bytes), the
  # oldest has waited `flush_interval`, or `flush` / `close` asks; a background thread sends
  # each batch to `POST /v1/track/batch`, gzipped, one at a time, in order. Every event carries
  # an `event_id` before it is queued, so resending a batch whose answer was lost stores nothing
  # twice: the server keeps the first and answers the repeat as deduplicated.
  class Batcher
    # The server takes 1,000 events and 524,288 decoded bytes a batch; stay under both.
    MAX_BATCH_EVENTS = 1000
    MAX_BATCH_BYTES = 500_000

    Item = Struct.new(:event, :json, :result)

    # Batchers with a worker, closed at exit (a strong reference: the worker holds events).
    @live = {}
    @live_lock = Mutex.new
    class << self
      def register(batcher)
        @live_lock.synchronize do
          unless @exit_hook
            @exit_hook = true
            at_exit { live.each(&:close) }
          end
          @live[batcher] = true
        end
      end

      def unregister(batcher)
        @live_lock.synchronize { @live.delete(batcher) }
      end

      def live
        @live_lock.synchronize { @live.keys }
      end
    end

    def initialize(transport:, max_batch_size:, flush_interval:, gzip:, on_result: nil, logger: nil)
      @transport = transport
      @max_batch_size = max_batch_size.to_i.clamp(1, MAX_BATCH_EVENTS)
      @flush_interval = flush_interval.to_f
      @gzip = gzip
      @on_result = on_result
      @logger = logger
      @mutex = Mutex.new
      @cond = ConditionVariable.new
      reset
    end

    # Queues one encoded event; its result settles when its batch is answered.
    def enqueue(event, json, result)
      @mutex.synchronize do
        reset if Process.pid != @pid
        raise Error, "Trackway: track after close" if @closed

        start_worker
        @queue << Item.new(event, json, result)
        @enqueued += 1
        @oldest_at ||= now
        @cond.broadcast if @queue.size == 1 || @queue.size >= @max_batch_size
      end
      result
    end

    # Sends everything queued now, waits until those events (and any in flight) are answered,
    # and returns their results.
    def flush
      if Thread.current.equal?(@worker)
        raise Error, "Trackway: flush cannot be called from on_result (it runs on the batch thread)"
      end

      @mutex.synchronize do
        reset if Process.pid != @pid
        pending = (@in_flight + @queue).map(&:result)
        return pending if pending.empty?

        start_worker
        target = @enqueued
        @flushing = true
        @cond.broadcast
        until @settled >= target
          recover_worker
          @cond.wait(@mutex, 0.5)
        end
        pending
      end
    end

    # Flushes, stops the worker and refuses further events.
    def close
      results = flush
      worker = @mutex.synchronize do
        @closed = true
        @cond.broadcast
        @worker
      end
      worker&.join unless Thread.current.equal?(worker)
      @transport.close
      Batcher.unregister(self)
      results
    end

    def pending
      @mutex.synchronize { @queue.size + @in_flight.size }
    end

    private

    # A forked child (Puma, Unicorn, Sidekiq) starts empty: the parent sends what it had queued.
    def reset
      @pid = Process.pid
      @queue = []
      @in_flight = []
      @oldest_at = nil
      @flushing = false
      @closed = false
      @enqueued = 0
      @settled = 0
      @worker = nil
    end

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def start_worker
      return if @worker&.alive?

      @worker = Thread.new { run }
      @worker.name = "trackway-batcher"
      @worker.report_on_exception = false
      Batcher.register(self)
    end

    # The worker died (killed from outside): what it held fails, a new one takes the queue.
    def recover_worker
      return if @worker&.alive?

      @in_flight.each do |item|
        settle_failed(item, 0, "Client error", "the batch thread stopped") if item.result.pending?
      end
      @settled += @in_flight.size
      @in_flight = []
      start_worker unless @queue.empty?
    end

    def run
      loop do
        batch = @mutex.synchronize do
          until ready?
            return if @closed && @queue.empty?

            if @queue.empty?
              @cond.wait(@mutex)
            else
              @cond.wait(@mutex, [@flush_interval - (now - @oldest_at), 0.001].max)
            end
          end
          take_batch
        end
        deliver(batch)
        @mutex.synchronize do
          @in_flight = []
          @settled += batch.size
          @cond.broadcast
        end
      end
    end

    def ready?
      return false if @queue.empty?

      @flushing || @closed || @queue.size >= @max_batch_size || now - @oldest_at >= @flush_interval
    end

    def take_batch
      count = 0
      bytes = 12
      while count < @max_batch_size && count < @queue.size
        size = @queue[count].json.bytesize + 1
        break if count.positive? && bytes + size > MAX_BATCH_BYTES

        bytes += size
        count += 1
      end
      batch = @queue.shift(count)
      @in_flight = batch
      if @queue.empty?
        @oldest_at = nil
        @flushing = false
      else
        @oldest_at = now
      end
      batch
    end

    def deliver(batch)
      send_batch(batch)
    rescue StandardError => e
      # A bug must not stall flush(): whatever is still pending fails with the reason.
      @logger&.error("trackway: batch failed: #{e.class}: #{e.message}")
      batch.each do |item|
        settle_failed(item, 0, "Client error", "#{e.class}: #{e.message}") if item.result.pending?
      end
    end

    # Sends `batch` until every event in it has a final answer. Events the server answers with
    # a 5xx in their slot ("not stored; safe to retry") are sent again with the same ids.
    def send_batch(batch)
      waiting = batch
      round = 0
      until waiting.empty?
        raw = +"{\"events\":["
        waiting.each_with_index { |item, i| raw << "," if i.positive?; raw << item.json }
        raw << "]}"
        begin
          response = @transport.exchange(
            "POST", "/v1/track/batch",
            body: @gzip ? Zlib.gzip(raw, level: 1) : raw,
            headers: @gzip ? { "Content-Encoding" => "gzip" } : {},
            retry_server_errors: true
          )
        rescue APIError => e
          if e.status == 413 && waiting.size > 1
            # Bigger than the server takes after all: halve it and send both halves.
            half = (waiting.size + 1) / 2
            send_batch(waiting[0...half])
            send_batch(waiting[half..])
            return
          end
          waiting.each { |item| settle_failed(item, e.status, e.error, e.message, e.field) }
          return
        rescue NetworkError => e
          waiting.each { |item| settle_failed(item, 0, "Network error", e.message) }
          return
        end
        results = response.body["results"].is_a?(Array) ? response.body["results"] : []
        retry_items = []
        waiting.each_with_index do |item, index|
          slot = results[index].is_a?(Hash) ? results[index] : {}
          status = slot["status"].is_a?(Integer) ? slot["status"] : 0
          if status == 200
            item.result.settle_ok(
              deduplicated: slot["deduplicated"] == true,
              message: slot["message"].to_s,
              warnings: slot["warnings"].is_a?(Array) ? slot["warnings"] : []
            )
            notify(item)
          elsif status >= 500 && round < @transport.max_retries
            retry_items << item
          else
            settle_failed(item, status, slot["error"] || "Invalid response",
                          slot["message"] || "No result for this event in the batch response", slot["field"])
          end
        end
        waiting = retry_items
        sleep(@transport.backoff(round)) unless waiting.empty?
        round += 1
      end
    end

    def settle_failed(item, status, error, message, field = nil)
      item.result.settle_failed(status: status, error: error, message: message, field: field)
      notify(item)
    end

    def notify(item)
      @on_result&.call(item.result, item.event)
    rescue StandardError => e
      # A raising callback must not stall the queue; it is the caller's code to fix.
      @logger&.error("trackway: on_result raised #{e.class}: #{e.message}")
    end
  end
end
