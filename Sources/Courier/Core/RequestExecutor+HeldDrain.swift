/// The executor's drain is what a ``DeliveryBatch`` holds back (`RequestExecutor.startClaimedDrain`).
extension RequestExecutor: HeldDrain {}
