# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "uri"
require "zlib"

module Trackway
  # @api private
  # One HTTP answer: status, lower-cased headers, the JSON body parsed (nil when not JSON).
  Response = Struct.new(:status, :headers, :body, keyword_init: true)

  # @api private
  # HTTP exchanges with retries over one kept-alive Net::HTTP connection; one instance per
  # thread that uses it (the batch worker has its own).
  #
  # Which failures are retried is the caller's call (a resent POST that creates something could
  # create it twice); when is decided here: a 429 after the `retry_after` the server names, a 5xx
  # or network error after a jittered exponential backoff, another 4xx never.
  class Transport
    NETWORK_ERRORS = [
      IOError, SystemCallError, SocketError, Timeout::Error, OpenSSL::SSL::SSLError,
      Net::HTTPBadResponse, Net::ProtocolError, Zlib::Error
    ].freeze

    def initialize(base_url:, api_key:, timeout:, max_retries:, retry_base_delay:,
                   retry_max_delay:, max_retry_wait:, logger: nil)
      @uri = URI.parse(base_url)
      # A base URL may carry a path (a proxy mounting Trackway under /trackway).
      @prefix = @uri.path.to_s.chomp("/")
      @api_key = api_key
      @timeout = timeout
      @max_retries = max_retries
      @retry_base_delay = retry_base_delay
      @retry_max_delay = retry_max_delay
      @max_retry_wait = max_retry_wait
      @logger = logger
      @http = nil
      @pid = Process.pid
      @lock = Mutex.new
    end

    attr_reader :max_retries

    # Sends until an answer that is final for this request: 2xx, a 4xx other than 429, or a
    # retryable failure once retries are spent (then raised). `retry_server_errors: false`
    # retries only 429, which the server answers before doing anything.
    def exchange(method, path, body: nil, headers: {}, retry_server_errors: true)
      retries = 0
      loop do
        begin
          response = send_once(method, path, body, headers)
        rescue NetworkError => e
          raise if !retry_server_errors || retries >= @max_retries

          wait = backoff(retries)
          @logger&.warn("trackway: #{method} #{path} failed (#{e.message}); retrying in #{wait.round(2)} s")
          sleep(wait)
          retries += 1
          next
        end
        status = response.status
        return response if status < 400

        if status == 429
          wait = retry_after(response)
          # A wait longer than max_retry_wait (a spent daily limit) is reported, not slept on.
          raise APIError.from_response(status, response.body) if retries >= @max_retries || wait > @max_retry_wait
        elsif !retry_server_errors || status < 500 || retries >= @max_retries
          raise APIError.from_response(status, response.body)
        else
          wait = backoff(retries)
        end
        @logger&.warn("trackway: #{method} #{path} answered #{status}; retrying in #{wait.round(2)} s")
        sleep(wait)
        retries += 1
      end
    end

    # "Equal jitter": half the exponential step for sure, the other half random, so the retries
    # of many clients spread out but none retries at once. Seconds.
    def backoff(retry_number)
      step = [@retry_max_delay, @retry_base_delay * (2**retry_number)].min
      (step / 2.0) + (rand * step / 2.0)
    end

    # One attempt. A 2xx whose body is not complete JSON counts as no answer: every Trackway
    # route answers JSON, so a cut-short body means the connection broke mid-answer.
    def send_once(method, path, body, headers)
      request = Net::HTTPGenericRequest.new(method, !body.nil?, true, "#{@prefix}#{path}")
      request["Authorization"] = "Bearer #{@api_key}"
      request["Accept"] = "application/json"
      request["User-Agent"] = "trackway-ruby/#{VERSION} ruby/#{RUBY_VERSION}"
      if body
        request["Content-Type"] = "application/json"
        request.body = body
      end
      headers.each { |name, value| request[name] = value }
      raw = @lock.synchronize { perform(request) }
      parsed = parse(raw.body)
      status = raw.code.to_i
      if status.between?(200, 299) && !parsed.is_a?(Hash)
        raise NetworkError, "Request failed: the answer was cut short or not JSON"
      end

      Response.new(status: status, headers: raw.to_hash.transform_values(&:first), body: parsed)
    end

    def close
      @lock.synchronize { disconnect }
    end

    private

    def perform(request)
      if @pid != Process.pid
        # A forked child must not talk on its parent's kept-alive socket: open its own.
        @http = nil
        @pid = Process.pid
      end
      @http ||= connect
      @http.request(request)
    rescue *NETWORK_ERRORS => e
      disconnect
      raise NetworkError, "Request failed: #{e.message} (#{e.class})"
    end

    def connect
      http = Net::HTTP.new(@uri.host, @uri.port)
      http.use_ssl = @uri.scheme == "https"
      http.open_timeout = @timeout
      http.read_timeout = @timeout
      http.write_timeout = @timeout
      http.keep_alive_timeout = 2
      http.start
    end

    def disconnect
      @http&.finish if @http&.started?
    rescue IOError
      nil
    ensure
      @http = nil
    end

    def parse(text)
      return nil if text.nil? || text.empty?

      JSON.parse(text)
    rescue JSON::ParserError
      nil
    end

    # Seconds the server asked us to wait: the body's `retry_after`, else `Retry-After`, else 1.
    def retry_after(response)
      seconds =
        if response.body.is_a?(Hash) && response.body["retry_after"].is_a?(Numeric)
          response.body["retry_after"]
        else
          Float(response.headers["retry-after"], exception: false) || 1
        end
      [1.0, seconds.to_f].max
    end
  end
end
