package io.arrowmm.spark;

/**
 * A malformed, truncated or unsupported input, or a bad path: the message names the file, the
 * record batch, the column or buffer, the value found and what was expected.  An
 * {@code IllegalArgumentException}, so PySpark raises it as its {@code IllegalArgumentException}.
 */
public class ArrowmmException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public ArrowmmException(String message) {
    super(message);
  }

  public ArrowmmException(String message, Throwable cause) {
    super(message, cause);
  }
}
