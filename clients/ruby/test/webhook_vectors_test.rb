# frozen_string_literal: true

require "test_helper"

# Every vector of the file all Trackway clients share.
class WebhookVectorsTest < Minitest::Test
  FILE = JSON.parse(File.read(File.expand_path("../../webhook-vectors.json", __dir__)))

  FILE.fetch("vectors").each_with_index do |vector, index|
    define_method("test_vector_#{index}_#{vector["name"].gsub(/\W+/, "_")}") do
      outcome =
        begin
          payload = Trackway.verify_webhook(vector["body"], vector["headers"], vector["secrets"],
                                            now: vector["now"], tolerance: FILE["tolerance_seconds"])
          "ok"
        rescue Trackway::WebhookVerificationError => e
          refute_empty e.message
          e.code
        end
      assert_equal vector["expect"], outcome, vector["name"]
      assert_equal JSON.parse(vector["body"]), payload if outcome == "ok"
    end
  end

  def test_the_file_has_every_case_the_issue_names
    expects = FILE["vectors"].map { |v| v["expect"] }
    %w[ok invalid_signature timestamp_out_of_tolerance missing_signature invalid_timestamp].each do |code|
      assert_includes expects, code
    end
  end

  def valid
    FILE["vectors"].first
  end

  def test_rack_env_and_array_valued_headers_are_understood
    env = valid["headers"].to_h { |name, value| ["HTTP_#{name.upcase.tr("-", "_")}", value] }
    lists = valid["headers"].transform_values { |value| [value] }
    assert_equal "event.tracked", Trackway.verify_webhook(valid["body"], env, valid["secrets"], now: valid["now"])["event"]
    assert_equal "event.tracked", Trackway.verify_webhook(valid["body"], lists, valid["secrets"], now: valid["now"])["event"]
  end

  def test_no_secret_is_a_programming_error
    assert_raises(ArgumentError) { Trackway.verify_webhook(valid["body"], valid["headers"], [], now: valid["now"]) }
  end

  def test_the_current_time_is_the_default
    error = assert_raises(Trackway::WebhookVerificationError) do
      Trackway.verify_webhook(valid["body"], valid["headers"], valid["secrets"])
    end
    assert_equal "timestamp_out_of_tolerance", error.code
  end
end
