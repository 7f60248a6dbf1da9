"""A store's failure is said with the store's reason (issue 39): a missing bucket is "no such bucket", not
"no such file or directory"; access denied keeps the provider's error code and message."""

from __future__ import annotations

import pytest

from tests.conftest import assert_no_traceback, run_cli

pytest.importorskip("pyarrow", reason="URIs are read through pyarrow (the test extra installs it)")


@pytest.mark.parametrize("command", [["verify-index"], ["dump", "--files"]])
def test_a_missing_bucket_is_said_so(s3, command: list[str]) -> None:
    uri = "s3://kseg-no-such-bucket/brokers/b1/data/plain-v2-0/00000000000000000000.log"
    r = run_cli([*command, uri])
    assert r.exit_code == 2, r.text + r.errtext
    assert_no_traceback(r)
    assert "no such bucket" in r.errtext and "kseg-no-such-bucket" in r.errtext, r.errtext
    assert "no such file or directory" not in r.errtext


def test_a_missing_key_in_a_bucket_that_exists_is_no_such_file(s3) -> None:
    r = run_cli(["verify-index", s3.uri("brokers/b1/data/nothing-here-0")])
    assert r.exit_code == 2 and "no such file or directory" in r.errtext and "bucket" not in r.errtext, r.errtext


def test_access_denied_keeps_the_providers_code_and_message() -> None:
    from kseg.storage.location import _mapped

    said = OSError(
        "When reading information for key 'data/t-0/00000000000000000000.log' in bucket 'backups': "
        "AWS Error ACCESS_DENIED during HeadObject operation: No response body. (Request ID: X1)"
    )
    err = _mapped(said, "s3://backups/data/t-0/00000000000000000000.log").describe()
    assert "access denied (AWS Error ACCESS_DENIED during HeadObject operation: No response body.)" in err, err
    assert "permission denied" not in err
    timeout = OSError(
        "When listing objects under key 'x/' in bucket 'b': "
        "AWS Error NETWORK_CONNECTION during ListObjectsV2 operation: curlCode: 28, Timeout was reached"
    )
    said = _mapped(timeout, "s3://b/x").describe()
    assert "AWS Error NETWORK_CONNECTION during ListObjectsV2 operation: curlCode: 28" in said
