import HubCore
import HubHost
import Testing

@Suite struct ModelLocationTests {
    @Test func rootAndChildLocationsSurviveTheirCode() throws {
        let child = ComponentModel(identifier: "k", type: .body, index: 1, indexPath: [4, 1])
        let first = ComponentModel(identifier: "k0", type: .body, index: 0, indexPath: [4, 0])
        let parent = ComponentModel(identifier: "p", type: .body, index: 4, children: [first, child])
        let view = ViewModel(body: (0..<5).map { $0 == 4 ? parent : ComponentModel(identifier: "m\($0)", index: $0) })
        let location = try #require(ModelLocation(code: child.locationCode))
        #expect(location.description == "body[4].children[1]")
        #expect(location.model(in: view) === child)
        #expect(ModelLocation(code: parent.locationCode)?.description == "body[4]")
        #expect(ModelLocation(code: 0) == nil)
        let header = ComponentModel(identifier: "h", type: .header)
        #expect(ModelLocation(code: header.locationCode)?.description == "header")
    }

    @Test func hugeIndexesSaturateInsteadOfTrapping() {
        let model = ComponentModel(identifier: "x", type: .overlay, index: Int.max)
        #expect(ModelLocation(code: model.locationCode)?.indexPath == [(1 << 27) - 1])
        let deep = ComponentModel(identifier: "d", index: 0, indexPath: [0, 70_000, 2, 3])
        let location = ModelLocation(code: deep.locationCode)
        #expect(location?.indexPath == [0, 65_535, 2])
        #expect(location?.truncated == true)
    }
}
