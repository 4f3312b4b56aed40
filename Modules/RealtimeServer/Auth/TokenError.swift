public import RequestParsing

/// Why a token was refused (``RequestParsing/TokenError``, where tokens are decoded): named here
/// too, since ``TokenVerifier`` throws it.
public typealias TokenError = RequestParsing.TokenError
